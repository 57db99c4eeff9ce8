// The policy-gradient loss of one step: PPO-clip with separate low and high clips.
//
// The policy-gradient loss of one step (design.md §6): PPO-clip on the ratio pi / pi_rollout with
// separate low and high clips (0.2 / 0.28, DAPO's clip-higher), aggregated over tokens one of three
// ways, with an optional KL penalty to a reference model (k3 estimator; off by default).
//
//   per token t of sequence s:  rho = exp(logp - logp_rollout)
//     loss_t = -min(rho * A_s, clip(rho, 1 - clip_low, 1 + clip_high) * A_s)
//   token_mean            sum_t loss_t / (number of tokens)
//   seq_mean_token_mean   mean_s (mean_{t in s} loss_t)
//   constant_normalized   sum_t loss_t / constant   (Dr. GRPO: no length bias)
//
// Tensors are 1-D, one entry per masked target, concatenated in sequence order: what
// TrainableBackbone::logprobs returns.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <ATen/core/Tensor.h>

namespace vinci::train {

enum class LossAggregation { token_mean, seq_mean_token_mean, constant_normalized };
std::string_view to_string(LossAggregation a);
LossAggregation loss_aggregation_from_string(std::string_view s);  // throws std::invalid_argument naming it

struct PolicyLossConfig {
  double clip_low = 0.2;
  double clip_high = 0.28;
  LossAggregation aggregation = LossAggregation::token_mean;
  double constant = 1.0;  // constant_normalized's divisor (e.g. max response tokens x batch size)
  double kl_coef = 0.0;   // 0: no KL term
};

struct PolicyLossStats {
  double pg_loss = 0;             // the clipped surrogate alone
  double kl = 0;                  // aggregated like the loss; 0 without a reference
  double clip_fraction_low = 0;   // tokens whose clipped term won below 1 - clip_low
  double clip_fraction_high = 0;  // ... above 1 + clip_high
  double mean_ratio = 1;
  int64_t tokens = 0;
};

// logprobs carries gradients; rollout_logprobs and reference_logprobs (an undefined tensor: none)
// are treated as constants. advantages and tokens_per_sequence have one entry per sequence.
// Throws std::invalid_argument when the lengths disagree.
at::Tensor policy_loss(const at::Tensor& logprobs, const at::Tensor& rollout_logprobs,
                       std::span<const double> advantages, std::span<const int64_t> tokens_per_sequence,
                       const PolicyLossConfig& config, PolicyLossStats* stats = nullptr,
                       const at::Tensor& reference_logprobs = {});

}  // namespace vinci::train
