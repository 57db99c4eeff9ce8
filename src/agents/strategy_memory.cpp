#include "agents/strategy_memory.h"

#include <cctype>

#include <fmt/format.h>

#include "agents/output_parser.h"
#include "core/utf8.h"

namespace vinci::agents {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string clip(std::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return std::string(s);
  return std::string(core::utf8_prefix(s, max_chars - 3)) + "...";
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

}  // namespace

std::string stated_strategy(std::string_view response, size_t max_chars) {
  const std::string answer = strip_reasoning(response);
  std::string first_prose;
  bool in_code = false;
  size_t start = 0;
  while (start < answer.size()) {
    size_t end = answer.find('\n', start);
    if (end == std::string::npos) end = answer.size();
    std::string_view line = trim(std::string_view(answer).substr(start, end - start));
    start = end + 1;
    if (line.starts_with("```")) {
      in_code = !in_code;
      continue;
    }
    if (in_code || line.empty()) continue;
    std::string_view bare = line;
    // Markup may nest with spaces between: "- **Strategy:**".
    while (!bare.empty() && (bare.front() == '#' || bare.front() == '*' || bare.front() == '-' || bare.front() == ' '))
      bare.remove_prefix(1);
    bare = trim(bare);
    if (starts_with_ci(bare, "strategy")) {
      bare.remove_prefix(8);
      while (!bare.empty() && (bare.front() == ':' || bare.front() == '*' || bare.front() == ' '))
        bare.remove_prefix(1);
      if (!bare.empty()) return clip(bare, max_chars);
    }
    if (first_prose.empty()) first_prose = clip(bare, max_chars);
  }
  return first_prose;
}

void StrategyMemory::add(std::string strategy, std::string outcome) {
  if (strategy.empty()) strategy = "(no strategy stated)";
  entries_.push_back({std::move(strategy), std::move(outcome)});
}

std::string StrategyMemory::render(size_t max_entries) const {
  if (entries_.empty()) return "";
  std::string out =
      "## Strategies already tried on this task\nDo not repeat one that failed or was slow; build on the best.\n";
  const size_t first = entries_.size() > max_entries ? entries_.size() - max_entries : 0;
  if (first > 0) out += fmt::format("({} earlier attempts not shown)\n", first);
  for (size_t i = first; i < entries_.size(); ++i)
    out += fmt::format("- {} -> {}\n", entries_[i].strategy, entries_[i].outcome);
  return out;
}

}  // namespace vinci::agents
