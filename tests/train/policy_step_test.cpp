// The update step (src/train/policy_step): gradient accumulation in micro-batches must give the update
// of the whole batch at once, for each aggregation; MRS drops a sequence whose rollout logprobs
// are off and keeps its place in the denominator; with the trainer's own old logprobs, ratios are 1.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm_native/native_backbone.h"
#include "train/policy_step.h"

namespace policy_step_test {

using vinci::train::LossAggregation;

const auto kFixtures = std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";

std::unique_ptr<vinci::llm::TrainableBackbone> model() {
  vinci::llm::NativeOptions options;
  options.device = "cpu";
  options.dtype = "float64";
  options.training.mode = vinci::llm::Training::Mode::full;
  return vinci::llm::open_native_backbone(kFixtures / "models/qwen3", options);
}

// Three sequences of the golden forced ids; the second half of each is the "response", with the
// model's own logprobs (+ an offset per sequence, inside the clip range) as the rollout's.
std::vector<vinci::rl::TrainingSample> samples(vinci::llm::TrainableBackbone& backbone, float drift_of_last = 0.0f) {
  const auto golden = nlohmann::json::parse(vinci::core::read_file(kFixtures / "models/qwen3/golden.json"));
  std::vector<vinci::rl::TrainingSample> out;
  const double advantages[3] = {0.9, -0.4, 1.3};
  for (size_t i = 0; i < 3; ++i) {
    vinci::rl::TrainingSample s;
    s.ids = golden["forced"][i].get<std::vector<int32_t>>();
    s.loss_mask.assign(s.ids.size(), 0);
    for (size_t t = s.ids.size() / 2; t < s.ids.size(); ++t) s.loss_mask[t] = 1;
    s.advantage = advantages[i];
    out.push_back(std::move(s));
  }
  c10::NoGradGuard no_grad;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto lp = backbone.logprobs({{{out[i].ids, out[i].loss_mask}}}, {}).to(at::kFloat).contiguous();
    const float offset = 0.02f * static_cast<float>(i + 1) + (i == 2 ? drift_of_last : 0.0f);
    for (int64_t t = 0; t < lp.numel(); ++t) out[i].rollout_logprobs.push_back(lp.data_ptr<float>()[t] - offset);
  }
  return out;
}

std::vector<at::Tensor> after_one_step(int64_t micro_batch_tokens, LossAggregation aggregation, float drift_of_last,
                                       vinci::train::PolicyStepStats* stats = nullptr,
                                       vinci::train::OldLogprobs old = vinci::train::OldLogprobs::sampler) {
  auto backbone = model();
  vinci::train::AdamWConfig adam;
  adam.lr.peak = 1e-3;
  vinci::train::AdamW optimizer(backbone->trainable_parameters(), adam);
  vinci::train::PolicyStepConfig config;
  config.micro_batch_tokens = micro_batch_tokens;
  config.loss.aggregation = aggregation;
  config.loss.constant = 50;
  config.old_logprobs = old;
  config.mrs_config.delta = 0.1;  // the offsets above are on-policy enough; a drift of 1 is not
  const auto batch = samples(*backbone, drift_of_last);
  const auto s = vinci::train::policy_step(*backbone, optimizer, batch, config);
  if (stats) *stats = s;
  std::vector<at::Tensor> params;
  for (const auto& p : backbone->trainable_parameters()) params.push_back(p.detach().clone());
  return params;
}

double max_difference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

TEST(PolicyStep, MicroBatchesGiveTheWholeBatchsUpdate) {
  for (const auto aggregation :
       {LossAggregation::token_mean, LossAggregation::seq_mean_token_mean, LossAggregation::constant_normalized}) {
    SCOPED_TRACE(vinci::train::to_string(aggregation));
    vinci::train::PolicyStepStats whole_stats, split_stats;
    const auto whole = after_one_step(0, aggregation, 0.0f, &whole_stats);
    const auto split = after_one_step(1, aggregation, 0.0f, &split_stats);  // one sequence per micro-batch
    EXPECT_EQ(whole_stats.micro_batches, 1);
    EXPECT_EQ(split_stats.micro_batches, 3);
    EXPECT_NEAR(whole_stats.loss, split_stats.loss, 1e-12);
    EXPECT_NEAR(whole_stats.optimizer.grad_norm, split_stats.optimizer.grad_norm, 1e-12);
    EXPECT_LT(max_difference(whole, split), 1e-12);
    EXPECT_EQ(whole_stats.mrs_rejected, 0u);
    // |trainer - rollout| is each sequence's offset (0.02, 0.04, 0.06), weighted by its tokens
    const auto golden = nlohmann::json::parse(vinci::core::read_file(kFixtures / "models/qwen3/golden.json"));
    double weighted = 0, tokens = 0;
    for (size_t i = 0; i < 3; ++i) {
      const size_t length = golden["forced"][i].size(), n = length - length / 2;
      weighted += 0.02 * static_cast<double>(i + 1) * static_cast<double>(n);
      tokens += static_cast<double>(n);
    }
    EXPECT_NEAR(whole_stats.mean_abs_logprob_diff, weighted / tokens, 1e-6);
  }
}

TEST(PolicyStep, MrsDropsTheDriftedSequence) {
  vinci::train::PolicyStepStats stats;
  after_one_step(0, LossAggregation::token_mean, 1.0f, &stats);
  EXPECT_EQ(stats.mrs_rejected, 1u);
  EXPECT_EQ(stats.sequences, 3u);
  EXPECT_GT(stats.optimizer.step, 0);
}

TEST(PolicyStep, WithTheTrainersOwnOldLogprobsRatiosStartAtOneAndNothingIsDropped) {
  vinci::train::PolicyStepStats stats;
  after_one_step(0, LossAggregation::token_mean, 1.0f, &stats, vinci::train::OldLogprobs::trainer);
  EXPECT_EQ(stats.mrs_rejected, 0u) << "the drifted sampler is a diagnostic, not the old policy";
  EXPECT_EQ(stats.clip_fraction_low + stats.clip_fraction_high, 0.0);
  // Every ratio is 1, so the token-mean PPO loss is minus the token-weighted mean advantage.
  const auto golden = nlohmann::json::parse(vinci::core::read_file(kFixtures / "models/qwen3/golden.json"));
  const double advantages[3] = {0.9, -0.4, 1.3};
  double weighted = 0, tokens = 0;
  for (size_t i = 0; i < 3; ++i) {
    const size_t length = golden["forced"][i].size(), n = length - length / 2;
    weighted += advantages[i] * static_cast<double>(n);
    tokens += static_cast<double>(n);
  }
  // Old logprobs are kept in fp32, as a sampler's are: against this fp64 model a ratio is 1 to ~1e-7.
  EXPECT_NEAR(stats.loss, -weighted / tokens, 1e-6);
  EXPECT_GT(stats.mean_abs_logprob_diff, 0.02) << "|trainer - sampler| is still reported";
  EXPECT_EQ(vinci::train::old_logprobs_from_string(vinci::train::to_string(vinci::train::OldLogprobs::sampler)),
            vinci::train::OldLogprobs::sampler);
  EXPECT_THROW(vinci::train::old_logprobs_from_string("rollout"), std::invalid_argument);
}

}  // namespace policy_step_test
