// Short-term memory: the strategies already tried on this task and how they ended.
//
// Short-term memory (KernelSkill): the strategies already tried on this task and how they ended,
// shown to the policy on every later turn so it does not go back over them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vinci::agents {

// The strategy an answer states: its "Strategy:" line when it has one (the policy prompt asks for
// it), else the first line of prose outside reasoning and code; empty when there is none. At most
// max_chars, on one line.
std::string stated_strategy(std::string_view response, size_t max_chars = 200);

class StrategyMemory {
 public:
  struct Entry {
    std::string strategy;
    std::string outcome;
  };

  void add(std::string strategy, std::string outcome);
  const std::vector<Entry>& entries() const { return entries_; }
  // "Strategies already tried on this task:" with the latest max_entries, or "" when empty.
  std::string render(size_t max_entries = 12) const;

 private:
  std::vector<Entry> entries_;
};

}  // namespace vinci::agents
