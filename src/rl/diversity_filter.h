// The diversity filter the SFT cold start runs before training.
//
// The diversity filter the SFT cold start runs before training: a model tuned on fifty copies of one
// softmax learns one softmax. In order, each conversation is removed when
//   1. near_duplicate: its solution (code with comments and blank space stripped) has an estimated
//      Jaccard similarity >= near_duplicate with a kept one of the same task and role (MinHash over
//      code-token shingles, as the skill library's dedup);
//   2. task_cap: max_per_task of its (task, role) were kept already;
//   3. skill_cap: one of its skills was used by max_per_skill kept conversations already;
//   4. level_balance / role_balance: its level (role) holds more than balance_ratio times the
//      smallest non-empty level (role); the last ones of the larger groups go.
// Earlier lines win each contest, so the file's order (shuffle it first if it is sorted) decides.
// Every removal names the rule and, for duplicates, the line it repeats.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "rl/sft_data.h"

namespace vinci::rl {

struct DiversityConfig {
  double near_duplicate = 0.8;
  size_t shingle_words = 3;
  size_t max_per_task = 8;     // per (task, role); 0: no cap
  size_t max_per_skill = 200;  // 0: no cap
  double balance_ratio = 3.0;  // 0: no balancing
  bool balance_levels = true;
  bool balance_roles = true;
};

struct Removal {
  size_t index = 0;  // into the conversations filtered
  std::string rule;  // near_duplicate, task_cap, skill_cap, level_balance, role_balance
  std::string detail;
};

struct DiversityReport {
  std::vector<size_t> kept;  // indices, in input order
  std::vector<Removal> removed;
  std::map<std::string, size_t> removed_by_rule;
  std::string summary() const;  // one line per rule, for the terminal
};

// Comments (#, //, /* */) and runs of blank space dropped: what two solutions share when they
// differ only in how they are written up.
std::string normalized_code(const std::string& code);

DiversityReport diversity_filter(std::span<const SftConversation> conversations, const DiversityConfig& config);

}  // namespace vinci::rl
