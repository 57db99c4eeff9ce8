#include "curriculum/composition_split.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/hash.h"

namespace vinci::curriculum {

CompositionSplit::CompositionSplit(uint64_t seed, double share) : seed_(seed), share_(share) {
  if (!(share > 0 && share < 1))
    throw std::invalid_argument(fmt::format("the held-out share must be in (0, 1), not {}", share));
}

bool CompositionSplit::held_out_pair(const std::string& first, const std::string& second) const {
  // A pair's fate depends on the seed and the pair alone: adding ops to the vocabulary, or tasks to
  // a run, moves no existing pair between the splits.
  const std::string h = core::content_hash({fmt::format("curriculum-split/{}", seed_), first, second});
  return static_cast<double>(std::stoull(h.substr(0, 13), nullptr, 16)) / 4503599627370496.0 < share_;  // 52 bits
}

std::vector<std::pair<std::string, std::string>> CompositionSplit::held_out_pairs(
    const std::vector<std::string>& tokens) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 1; i < tokens.size(); ++i)
    if (held_out_pair(tokens[i - 1], tokens[i])) out.emplace_back(tokens[i - 1], tokens[i]);
  return out;
}

}  // namespace vinci::curriculum
