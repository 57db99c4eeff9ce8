// The reward of one policy turn, from what the evaluator measured (design.md §6). Three published
// shapes, every constant a config value:
//   davinci  correct: w_c + w_s·min(speedup, cap) + w_v·coverage          (0.5 / 0.5 / 0.5, cap 6)
//   kevin    correct: w_c + speedup                                       (w_c = 0.3)
//   tiered   correct: 1, 2 when it beats eager by the margin, 3 when it beats eager and
//            torch.compile by the margin (5%); wrong: -1
// A wrong or crashed kernel gets the shape's failure reward (0, 0, -1). A kernel that did not build,
// or an answer without a kernel, gets compile_error_penalty; one the evaluator rejected (a hack, a
// decoy, a bypass) gets rejected_penalty; each defaults to the shape's failure reward.
#pragma once

#include <optional>
#include <string>

#include "agents/reward_inputs.h"

namespace vinci::rl {

enum class RewardKind { davinci, kevin, tiered };
std::string_view to_string(RewardKind kind);
RewardKind reward_kind_from_string(std::string_view s);  // throws std::invalid_argument naming it

struct RewardConfig {
  RewardKind kind = RewardKind::davinci;
  double correct_weight = 0.5;   // davinci's w_c (kevin uses kevin_correct_weight)
  double speedup_weight = 0.5;   // davinci's w_s
  double coverage_weight = 0.5;  // davinci's w_v: the share of forward time in the candidate's kernels
  double speedup_cap = 6.0;      // davinci: min(speedup, cap), so one lucky outlier cannot dominate
  double kevin_correct_weight = 0.3;
  double tier_margin = 0.05;                    // tiered: "beats" means speedup >= 1 + margin
  std::optional<double> compile_error_penalty;  // unset: the shape's failure reward
  std::optional<double> rejected_penalty;       // unset: the shape's failure reward
};

// A turn without a verdict (its answer held no kernel) is treated as one that did not build.
double turn_reward(const agents::TurnInputs& turn, const RewardConfig& config);

}  // namespace vinci::rl
