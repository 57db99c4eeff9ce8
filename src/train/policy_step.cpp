#include "train/policy_step.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace vinci::train {

namespace {

int64_t masked_tokens(const rl::TrainingSample& s) {
  return std::count(s.loss_mask.begin(), s.loss_mask.end(), uint8_t{1});
}

}  // namespace

std::string_view to_string(OldLogprobs source) { return source == OldLogprobs::trainer ? "trainer" : "sampler"; }

OldLogprobs old_logprobs_from_string(std::string_view name) {
  if (name == "trainer") return OldLogprobs::trainer;
  if (name == "sampler") return OldLogprobs::sampler;
  throw std::invalid_argument(fmt::format("old_logprobs '{}': expected trainer or sampler", name));
}

PolicyStepStats accumulate_policy_gradient(llm::TrainableBackbone& backbone, std::span<const rl::TrainingSample> all,
                                           const PolicyStepConfig& config, const parallel::DataParallel& parallel) {
  std::vector<const rl::TrainingSample*> samples;
  for (const auto& s : all) {
    const int64_t n = masked_tokens(s);
    if (n == 0) continue;
    if (static_cast<int64_t>(s.rollout_logprobs.size()) != n)
      throw std::invalid_argument(
          fmt::format("policy_step: a {} sample of {} masks {} tokens but has {} rollout logprobs",
                      agents::to_string(s.role), s.task, n, s.rollout_logprobs.size()));
    samples.push_back(&s);
  }
  PolicyStepStats stats;
  int64_t local_tokens = 0;
  for (const auto* s : samples) local_tokens += masked_tokens(*s);
  const auto totals = parallel.sum({static_cast<double>(local_tokens), static_cast<double>(samples.size())});
  const auto total_tokens = static_cast<int64_t>(totals[0]);
  const double total_sequences = totals[1];
  if (total_tokens == 0) return stats;

  double abs_diff = 0, clip_low = 0, clip_high = 0, entropy_sum = 0;
  int64_t kept_tokens_all = 0;
  bool any_gradient = false;
  for (size_t begin = 0; begin < samples.size();) {
    // The micro-batch: consecutive samples up to the token budget, at least one.
    size_t end = begin;
    int64_t length = 0;
    while (end < samples.size() &&
           (end == begin || config.micro_batch_tokens <= 0 ||
            length + static_cast<int64_t>(samples[end]->ids.size()) <= config.micro_batch_tokens))
      length += static_cast<int64_t>(samples[end++]->ids.size());
    ++stats.micro_batches;

    std::vector<llm::TrainSequence> sequences;
    for (size_t i = begin; i < end; ++i) sequences.push_back({samples[i]->ids, samples[i]->loss_mask});
    at::Tensor entropy;
    llm::LogprobOptions options = config.logprobs;
    options.entropy = &entropy;
    const at::Tensor logprobs = backbone.logprobs(sequences, options);
    entropy_sum += entropy.sum().item<double>();
    const at::Tensor trainer = logprobs.detach().to(at::kFloat).cpu().contiguous();
    const float* trainer_values = trainer.data_ptr<float>();

    std::vector<int64_t> keep_index, kept_lengths;
    std::vector<float> kept_rollout;
    std::vector<double> kept_advantages;
    int64_t offset = 0;
    for (size_t i = begin; i < end; ++i) {
      const auto& s = *samples[i];
      const auto n = static_cast<int64_t>(s.rollout_logprobs.size());
      const std::span<const float> mine(trainer_values + offset, static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t) abs_diff += std::abs(mine[t] - s.rollout_logprobs[t]);
      const std::span<const float> old =
          config.old_logprobs == OldLogprobs::trainer ? mine : std::span<const float>(s.rollout_logprobs);
      const bool keep = !config.mrs || rl::masked_rejection(mine, old, config.mrs_config).keep;
      if (keep) {
        for (int64_t t = 0; t < n; ++t) keep_index.push_back(offset + t);
        kept_rollout.insert(kept_rollout.end(), old.begin(), old.end());
        kept_lengths.push_back(n);
        kept_advantages.push_back(s.advantage);
      } else {
        ++stats.mrs_rejected;
      }
      offset += n;
    }
    stats.sequences += end - begin;
    begin = end;
    if (kept_lengths.empty()) continue;

    const auto index = at::tensor(keep_index, at::kLong).to(logprobs.device());
    const auto kept = logprobs.index_select(0, index);
    const auto rollout = at::tensor(kept_rollout, at::kFloat).to(logprobs.device());
    PolicyLossStats loss_stats;
    const at::Tensor loss = policy_loss(kept, rollout, kept_advantages, kept_lengths, config.loss, &loss_stats);
    const auto kept_tokens = static_cast<double>(keep_index.size());
    double weight = 1.0;
    if (config.loss.aggregation == LossAggregation::token_mean)
      weight = kept_tokens / static_cast<double>(total_tokens);
    if (config.loss.aggregation == LossAggregation::seq_mean_token_mean)
      weight = static_cast<double>(kept_lengths.size()) / total_sequences;
    (loss * weight).backward();
    any_gradient = true;
    stats.loss += loss.item<double>() * weight;
    clip_low += loss_stats.clip_fraction_low * kept_tokens;
    clip_high += loss_stats.clip_fraction_high * kept_tokens;
    kept_tokens_all += static_cast<int64_t>(keep_index.size());
  }
  const auto sums = parallel.sum({stats.loss, abs_diff, clip_low, clip_high, static_cast<double>(kept_tokens_all),
                                  static_cast<double>(stats.sequences), static_cast<double>(stats.mrs_rejected),
                                  any_gradient ? 1.0 : 0.0, entropy_sum});
  stats.has_gradient = sums[7] > 0;
  if (stats.has_gradient) parallel.sum_gradients(backbone.trainable_parameters());
  stats.loss = sums[0];
  stats.sequences = static_cast<size_t>(sums[5]);
  stats.mrs_rejected = static_cast<size_t>(sums[6]);
  stats.tokens = total_tokens;
  stats.mean_abs_logprob_diff = sums[1] / static_cast<double>(total_tokens);
  stats.mean_entropy = sums[8] / static_cast<double>(total_tokens);
  if (sums[4] > 0) {
    stats.clip_fraction_low = sums[2] / sums[4];
    stats.clip_fraction_high = sums[3] / sums[4];
  }
  return stats;
}

PolicyStepStats policy_step(llm::TrainableBackbone& backbone, AdamW& optimizer,
                            std::span<const rl::TrainingSample> samples, const PolicyStepConfig& config,
                            const parallel::DataParallel& parallel) {
  auto stats = accumulate_policy_gradient(backbone, samples, config, parallel);
  if (stats.has_gradient) stats.optimizer = optimizer.step();
  return stats;
}

}  // namespace vinci::train
