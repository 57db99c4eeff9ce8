// One policy-gradient update over a batch of training samples.
//
// One policy-gradient update over a batch of training samples (the mixed batch of all agents'
// calls): the trainer's logprobs of every masked token, MRS against the rollout's logprobs, the
// PPO-clip loss, backward in micro-batches of at most a token budget (gradient accumulation), one
// AdamW step.
//
// The loss of the whole batch is what the configured aggregation gives over all its sequences:
// each micro-batch's loss is weighted by its share of the batch's tokens (token_mean) or sequences
// (seq_mean_token_mean) before backward. Sequences MRS rejects contribute zeros and keep their
// place in those denominators, so a rejection never inflates the others' weight.
//
// Data parallel: each rank passes its share of the batch. The denominators are the whole batch's
// (summed over ranks first), so the gradients summed over ranks are the single-process gradient
// of the whole batch, and every rank then takes the same AdamW step.
#pragma once

#include <string_view>

#include <cstdint>
#include <span>

#include "llm/backbone.h"
#include "parallel/data_parallel.h"
#include "rl/rejection.h"
#include "rl/training_samples.h"
#include "train/adamw.h"
#include "train/policy_loss.h"

namespace vinci::train {

// The old policy of the PPO ratio and of MRS.
//  trainer: the trainer's own forward before the update. Right when the rollouts were sampled by these
//    very weights (vinci train rl's native sampler): the sampler's logprobs then differ from the
//    trainer's only by numerics (in bf16, KV-cache decode against one full forward: ~0.011 a token,
//    enough for MRS's +-0.001 band to drop half the batch), so ratios start at exactly 1, MRS has
//    nothing to reject, and |trainer - sampler| stays a diagnostic (mean_abs_logprob_diff).
//  sampler: the rollout's own logprobs, for a sampler whose weights may lag the trainer's (a server);
//    MRS then guards that drift.
enum class OldLogprobs { trainer, sampler };
std::string_view to_string(OldLogprobs source);
OldLogprobs old_logprobs_from_string(std::string_view name);  // throws std::invalid_argument naming it

struct PolicyStepConfig {
  PolicyLossConfig loss;
  OldLogprobs old_logprobs = OldLogprobs::trainer;
  bool mrs = true;
  rl::MrsConfig mrs_config;
  int64_t micro_batch_tokens = 16384;  // sequence tokens per forward/backward; 0: the whole batch at once
  llm::LogprobOptions logprobs{.pack = true};
};

struct PolicyStepStats {
  StepStats optimizer;
  double loss = 0;                                       // the aggregated loss, summed over micro-batches as weighted
  double clip_fraction_low = 0, clip_fraction_high = 0;  // over the kept tokens
  double mean_abs_logprob_diff = 0;                      // |trainer - rollout| per masked token, before the update
  double mean_entropy = 0;  // the trainer's entropy (nats) per masked token, before the update
  size_t sequences = 0, mrs_rejected = 0;
  int64_t tokens = 0, micro_batches = 0;  // micro-batches: this rank's
  bool has_gradient = false;              // some sequence of the batch survived MRS
};

// Samples without masked tokens are skipped. Throws std::invalid_argument when a sample's
// rollout logprobs do not match its mask.
PolicyStepStats policy_step(llm::TrainableBackbone& backbone, AdamW& optimizer,
                            std::span<const rl::TrainingSample> samples, const PolicyStepConfig& config,
                            const parallel::DataParallel& parallel = {});

// The step without the update: forward, MRS, loss and backward of the samples, leaving the whole
// batch's gradient (summed over the ranks) in the trainable parameters. The stats are the batch's.
PolicyStepStats accumulate_policy_gradient(llm::TrainableBackbone& backbone,
                                           std::span<const rl::TrainingSample> samples, const PolicyStepConfig& config,
                                           const parallel::DataParallel& parallel = {});

}  // namespace vinci::train
