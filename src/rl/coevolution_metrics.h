// One co-evolution step in numbers: a line of metrics.jsonl. The struct is what the run hands its
// caller; to_json is the file's form, whose keys docs/, `vinci plot` and the tests read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace vinci::rl {

// One agent's samples of the step (every built sample, before PRS).
struct RoleStats {
  double reward_mean = 0, reward_std = 0;
  double response_tokens = 0;  // mean masked response tokens per sample
};

// A point of the held-out curve (train/heldout_point.h): the model's greedy first answers to a fixed
// subset of held-out tasks, on the steps the run's [heldout] every names.
struct HeldOutPoint {
  size_t tasks = 0;
  double correct = 0;  // the share of the tasks answered correctly
  double fast_1 = 0;   // ... correctly and faster than eager
};

struct CoevolutionMetrics {
  int64_t step = 0;
  int epoch = 0;  // the task cursor's epoch once the step's tasks were dealt
  size_t tasks = 0;
  double fast_1 = 0;           // the share of the step's tasks whose best turn beat eager
  size_t samples = 0;          // built from the episodes
  size_t trained_samples = 0;  // left after PRS
  size_t untrainable_calls = 0;
  // The update (train/policy_step).
  double pg_loss = 0, clip_fraction_low = 0, clip_fraction_high = 0, grad_norm = 0, lr = 0;
  double logprob_diff = 0, entropy = 0;
  size_t mrs_rejected = 0, prs_rejected = 0;
  // The library.
  size_t skills_proposed = 0, skills_verified = 0, skills_admitted = 0, library_size = 0;
  // Throughput: the update's tokens, their rate and its MFU; the slowest rank's generate and evaluate time.
  int64_t train_tokens = 0;
  double tokens_per_s = 0, mfu = 0;
  int ranks = 1;
  double generate_s = 0, evaluate_s = 0, train_s = 0, step_s = 0;
  // Evaluation throughput (issue 16): kernels evaluated, those measured rather than answered from
  // the cache or a twin, and candidates per minute of the slowest rank's evaluation time.
  size_t candidates = 0, candidates_measured = 0;
  double candidates_per_min = 0;
  RoleStats policy, selection, summary;
  std::optional<HeldOutPoint> heldout;  // only on a held-out point's steps
};

// Keys as the fields are named; a role's stats as reward_mean_<role>, reward_std_<role> and
// response_tokens_<role>; a held-out point as heldout_tasks, heldout_correct and heldout_fast_1, absent
// from the other steps' lines.
nlohmann::json to_json(const CoevolutionMetrics& m);

}  // namespace vinci::rl
