// The held-out split by composition. A seeded share of all ordered token pairs is held out: a
// training task has none of them between adjacent tokens, a held-out task at least one. So every
// held-out task composes its ops in a way no training task shows, not just at another shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vinci::curriculum {

class CompositionSplit {
 public:
  // share: the fraction of token pairs held out, in (0, 1).
  CompositionSplit(uint64_t seed, double share);

  bool held_out_pair(const std::string& first, const std::string& second) const;
  // The held-out pairs among the composition's adjacent ones (empty: the composition may train).
  std::vector<std::pair<std::string, std::string>> held_out_pairs(const std::vector<std::string>& tokens) const;
  bool trains(const std::vector<std::string>& tokens) const { return held_out_pairs(tokens).empty(); }

 private:
  uint64_t seed_;
  double share_;
};

}  // namespace vinci::curriculum
