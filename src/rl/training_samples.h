// From episode records to what one gradient step trains on.
//
// From episode records to what one gradient step trains on: each trainable agent call becomes a
// sequence (prompt + response ids) whose loss mask covers only the model's own response tokens,
// with the sampler's logprobs of those tokens and the call's advantage (design.md §6):
//   policy     per-turn rewards of a rollout (its scheme and sample), discounted into returns, then
//              the configured estimator (TRLOO by default) across every episode of the batch;
//   selection  R = the mean best-turn reward of its scheme's rollouts, leave-one-out over the
//              task's selection calls, x selection_scale;
//   summary    R = the best verified speedup among the skills it got admitted (0 if none),
//              leave-one-out over the task's summary calls, x summary_scale.
// Verifier reruns are measurements, not decisions of the policy: they are not trained.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agents/episode.h"
#include "rl/advantage.h"
#include "rl/reward.h"

namespace vinci::rl {

struct SampleConfig {
  RewardConfig reward;
  AdvantageConfig advantage;
  bool train_selection = true;
  bool train_summary = true;
};

struct TrainingSample {
  agents::Role role = agents::Role::policy;
  std::string task;
  int scheme = -1, sample = 0, turn = 0;
  size_t episode = 0, call = 0;  // where it came from
  std::vector<int32_t> ids;      // prompt then response
  // loss_mask[i] = 1: ids[i] is a target, predicted from ids[< i]; only response tokens the call masks in.
  std::vector<uint8_t> loss_mask;
  std::vector<float> rollout_logprobs;  // one per masked target, in order
  double reward = 0;                    // the turn's reward (policy) or the agent's R (selection, summary)
  double advantage = 0;
  bool correct = false;  // policy: for PRS
  double coverage = 0;
};

struct SampleBatch {
  std::vector<TrainingSample> samples;
  size_t untrainable = 0;  // calls without token ids (a server that returned text only)
  size_t verify_calls = 0;
};

// Throws std::invalid_argument naming the episode and call when a record is inconsistent
// (logprobs or mask not one per response id, a policy call without its turn's reward inputs).
SampleBatch training_samples(std::span<const agents::Episode> episodes, const SampleConfig& config);

}  // namespace vinci::rl
