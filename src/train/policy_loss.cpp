#include "train/policy_loss.h"
#include "core/enum_names.h"

#include <numeric>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>

namespace vinci::train {

namespace {
constexpr std::array<core::EnumName<LossAggregation>, 3> kAggregations{
    {{LossAggregation::token_mean, "token_mean"},
     {LossAggregation::seq_mean_token_mean, "seq_mean_token_mean"},
     {LossAggregation::constant_normalized, "constant_normalized"}}};
}  // namespace

std::string_view to_string(LossAggregation a) { return core::enum_to_string(kAggregations, a); }

LossAggregation loss_aggregation_from_string(std::string_view s) {
  return core::enum_from_string(kAggregations, s, "loss aggregation");
}

namespace {

// Reduces per-token values to one number the configured way; segment_ids maps each token to its sequence.
at::Tensor aggregate(const at::Tensor& per_token, const at::Tensor& segment_ids, int64_t sequences,
                     const PolicyLossConfig& c) {
  switch (c.aggregation) {
    case LossAggregation::token_mean: return per_token.mean();
    case LossAggregation::constant_normalized: return per_token.sum() / c.constant;
    case LossAggregation::seq_mean_token_mean: {
      auto sums = at::zeros({sequences}, per_token.options()).index_add(0, segment_ids, per_token);
      auto counts = at::zeros({sequences}, per_token.options()).index_add(0, segment_ids, at::ones_like(per_token));
      return (sums / counts.clamp_min(1)).mean();
    }
  }
  throw std::logic_error("unknown loss aggregation");
}

}  // namespace

at::Tensor policy_loss(const at::Tensor& logprobs, const at::Tensor& rollout_logprobs,
                       std::span<const double> advantages, std::span<const int64_t> tokens_per_sequence,
                       const PolicyLossConfig& c, PolicyLossStats* stats, const at::Tensor& reference_logprobs) {
  const int64_t tokens = std::accumulate(tokens_per_sequence.begin(), tokens_per_sequence.end(), int64_t{0});
  if (advantages.size() != tokens_per_sequence.size())
    throw std::invalid_argument(
        fmt::format("policy_loss: {} advantages for {} sequences", advantages.size(), tokens_per_sequence.size()));
  if (logprobs.dim() != 1 || logprobs.size(0) != tokens || rollout_logprobs.sizes() != logprobs.sizes() ||
      (reference_logprobs.defined() && reference_logprobs.sizes() != logprobs.sizes()))
    throw std::invalid_argument(fmt::format("policy_loss: the sequences hold {} tokens, the logprobs {} (rollout {})",
                                            tokens, logprobs.numel(), rollout_logprobs.numel()));
  if (tokens == 0) throw std::invalid_argument("policy_loss: no tokens to train");
  if (c.aggregation == LossAggregation::constant_normalized && !(c.constant > 0))
    throw std::invalid_argument(
        fmt::format("policy_loss: constant_normalized needs a constant > 0, got {}", c.constant));

  const auto options = logprobs.options();
  std::vector<int64_t> segment(tokens);
  std::vector<double> per_token_advantage(tokens);
  for (size_t s = 0, t = 0; s < tokens_per_sequence.size(); ++s)
    for (int64_t k = 0; k < tokens_per_sequence[s]; ++k, ++t) {
      segment[t] = static_cast<int64_t>(s);
      per_token_advantage[t] = advantages[s];
    }
  const auto segment_ids = at::tensor(segment, at::kLong).to(logprobs.device());
  const auto adv = at::tensor(per_token_advantage, at::kDouble).to(options.device(), options.dtype());

  const auto ratio = at::exp(logprobs - rollout_logprobs.detach().to(options.dtype()));
  const auto clipped = at::clamp(ratio, 1.0 - c.clip_low, 1.0 + c.clip_high);
  const auto unclipped_term = ratio * adv, clipped_term = clipped * adv;
  const auto per_token = -at::minimum(unclipped_term, clipped_term);
  auto pg = aggregate(per_token, segment_ids, static_cast<int64_t>(tokens_per_sequence.size()), c);
  auto loss = pg;
  at::Tensor kl;
  if (reference_logprobs.defined() && c.kl_coef != 0.0) {
    // k3 = exp(ref - logp) - (ref - logp) - 1: unbiased, always >= 0.
    const auto diff = reference_logprobs.detach().to(options.dtype()) - logprobs;
    kl = aggregate(at::exp(diff) - diff - 1.0, segment_ids, static_cast<int64_t>(tokens_per_sequence.size()), c);
    loss = loss + c.kl_coef * kl;
  }
  if (stats) {
    const c10::NoGradGuard no_grad;
    // The clipped term wins where it is strictly smaller: there the token has no gradient.
    const auto clip_active = clipped_term < unclipped_term;
    stats->tokens = tokens;
    stats->pg_loss = pg.item<double>();
    stats->kl = kl.defined() ? kl.item<double>() : 0.0;
    stats->clip_fraction_low = (clip_active & (ratio < 1.0 - c.clip_low)).to(at::kDouble).mean().item<double>();
    stats->clip_fraction_high = (clip_active & (ratio > 1.0 + c.clip_high)).to(at::kDouble).mean().item<double>();
    stats->mean_ratio = ratio.to(at::kDouble).mean().item<double>();
  }
  return loss;
}

}  // namespace vinci::train
