// Returns and per-agent advantages (design.md §6). Every constant is a config value.
//
// Policy: each turn's discounted return G_t = sum_{t' >= t} gamma^(t'-t) r_t' is compared within a
// group of samples: by default TRLOO, the group of one (task, turn) across all schemes and samples,
// with A_i = G_i - mean_{j != i} G_j (a group of one gets 0). RLOO groups by task only; GRPO uses
// (G_i - mean) / (std + eps) within the group, the std with or without Bessel's correction.
// TRLOO may then divide each task's advantages by the task's mean |A| (+ eps).
//
// Selection: a scheme's R is the mean best-turn reward of its rollouts; A = scale * (R - the
// leave-one-out mean over the task's other schemes), scale 0.3.
// Summary: a summary call's R is the best verified speedup among the skills it got admitted (0 if
// none); A = scale * (R - the leave-one-out mean over the task's other summary calls), scale 0.5.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace vinci::rl {

// G_t for every turn of one rollout, from its per-turn rewards.
std::vector<double> discounted_returns(std::span<const double> rewards, double gamma);

enum class Estimator { loo, grpo };
enum class GroupKey { task_turn, task };

struct AdvantageConfig {
  double gamma = 1.0;  // daVinci; Kevin uses 0.4
  Estimator policy_estimator = Estimator::loo;
  GroupKey policy_group = GroupKey::task_turn;  // loo + task_turn is TRLOO, loo + task is RLOO
  bool normalize_by_task_mean_abs = false;      // TRLOO's optional scale
  double eps = 1e-6;
  bool std_bessel = false;  // GRPO's std: divide by n - 1 instead of n
  double selection_scale = 0.3;
  double summary_scale = 0.5;
};

// One policy turn to be scored: where it sits and its return.
struct PolicySample {
  std::string task;
  int turn = 0;
  double ret = 0;  // G_t
};

std::vector<double> policy_advantages(std::span<const PolicySample> samples, const AdvantageConfig& config);

// One scored item of the selection or summary agent: its task and R.
struct GroupedReward {
  std::string task;
  double reward = 0;
};

// scale * (R_i - mean of the other items of the same task); 0 for an item alone in its task.
std::vector<double> leave_one_out_advantages(std::span<const GroupedReward> items, double scale);

}  // namespace vinci::rl
