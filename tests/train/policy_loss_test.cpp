// The policy-gradient loss (src/train/policy_loss): each aggregation, the low and high clips and their
// gradients, the KL term, against values worked out by hand in the comments; then a finite-
// difference check of the whole loss through the tiny Qwen3 fixture's trainable logprobs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm_native/native_backbone.h"
#include "support/expect_near.h"
#include "support/finite_difference.h"
#include "train/policy_loss.h"

namespace policy_loss_test {

using vinci::test::expect_near;
using vinci::train::LossAggregation;
using vinci::train::PolicyLossConfig;
using vinci::train::PolicyLossStats;

// Two sequences of 2 and 1 tokens, advantages +1 and -1, rollout logprobs 0, ratios 1.5, 0.5, 1.1:
//   t0: rho 1.5, A +1: min(1.5, clip 1.28) = 1.28 -> loss -1.28, clipped high: no gradient
//   t1: rho 0.5, A +1: min(0.5, clip 0.8)  = 0.5  -> loss -0.5,  d/dlogp = -rho*A = -0.5
//   t2: rho 1.1, A -1: min(-1.1, -1.1)     = -1.1 -> loss +1.1,  d/dlogp = -rho*A = +1.1
struct Case {
  at::Tensor logprobs = at::log(at::tensor({1.5, 0.5, 1.1}, at::kDouble)).requires_grad_(true);
  at::Tensor rollout = at::zeros({3}, at::kDouble);
  std::vector<double> advantages = {1.0, -1.0};
  std::vector<int64_t> lengths = {2, 1};
};

std::vector<double> values(const at::Tensor& t) {
  auto c = t.to(at::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

TEST(PolicyLoss, TokenMeanWithClipsAndGradients) {
  Case c;
  PolicyLossStats stats;
  auto loss = vinci::train::policy_loss(c.logprobs, c.rollout, c.advantages, c.lengths, {}, &stats);
  EXPECT_NEAR(loss.item<double>(), (-1.28 - 0.5 + 1.1) / 3, 1e-12);
  loss.backward();
  expect_near(values(c.logprobs.grad()), {0.0, -0.5 / 3, 1.1 / 3});
  EXPECT_NEAR(stats.clip_fraction_high, 1.0 / 3, 1e-12);
  EXPECT_EQ(stats.clip_fraction_low, 0.0);
  EXPECT_NEAR(stats.mean_ratio, (1.5 + 0.5 + 1.1) / 3, 1e-12);
  EXPECT_EQ(stats.tokens, 3);
}

TEST(PolicyLoss, TheOtherAggregations) {
  Case c;
  PolicyLossConfig seq;
  seq.aggregation = LossAggregation::seq_mean_token_mean;  // ((-1.28 - 0.5)/2 + 1.1) / 2
  EXPECT_NEAR(vinci::train::policy_loss(c.logprobs, c.rollout, c.advantages, c.lengths, seq).item<double>(),
              ((-1.28 - 0.5) / 2 + 1.1) / 2, 1e-12);
  PolicyLossConfig constant;
  constant.aggregation = LossAggregation::constant_normalized;
  constant.constant = 4;  // (-1.28 - 0.5 + 1.1) / 4
  auto loss = vinci::train::policy_loss(c.logprobs, c.rollout, c.advantages, c.lengths, constant);
  EXPECT_NEAR(loss.item<double>(), -0.68 / 4, 1e-12);
  loss.backward();
  expect_near(values(c.logprobs.grad()), {0.0, -0.5 / 4, 1.1 / 4});
  for (const auto a :
       {LossAggregation::token_mean, LossAggregation::seq_mean_token_mean, LossAggregation::constant_normalized})
    EXPECT_EQ(vinci::train::loss_aggregation_from_string(vinci::train::to_string(a)), a);
  EXPECT_THROW(vinci::train::loss_aggregation_from_string("sum"), std::invalid_argument);
}

TEST(PolicyLoss, LowClipStopsTheGradientOfANegativeAdvantage) {
  // rho 0.5 with A = -1: min(-0.5, clip(0.5) = 0.8 -> -0.8) = -0.8 -> loss 0.8, clipped low
  auto logprobs = at::log(at::tensor({0.5}, at::kDouble)).requires_grad_(true);
  PolicyLossStats stats;
  std::vector<double> adv = {-1.0};
  std::vector<int64_t> len = {1};
  auto loss = vinci::train::policy_loss(logprobs, at::zeros({1}, at::kDouble), adv, len, {}, &stats);
  EXPECT_NEAR(loss.item<double>(), 0.8, 1e-12);
  loss.backward();
  EXPECT_EQ(logprobs.grad().item<double>(), 0.0);
  EXPECT_EQ(stats.clip_fraction_low, 1.0);
}

TEST(PolicyLoss, KlTermIsTheK3Estimate) {
  Case c;
  PolicyLossConfig kl;
  kl.kl_coef = 0.1;
  // reference logprobs 0: k3 = exp(-logp) + logp - 1 per token, token-mean, x 0.1
  double k3 = 0;
  for (double r : {1.5, 0.5, 1.1}) k3 += 1 / r + std::log(r) - 1;
  k3 /= 3;
  PolicyLossStats stats;
  auto loss = vinci::train::policy_loss(c.logprobs, c.rollout, c.advantages, c.lengths, kl, &stats,
                                        at::zeros({3}, at::kDouble));
  EXPECT_NEAR(stats.kl, k3, 1e-12);
  EXPECT_NEAR(loss.item<double>(), (-1.28 - 0.5 + 1.1) / 3 + 0.1 * k3, 1e-12);
  EXPECT_NEAR(stats.pg_loss, (-1.28 - 0.5 + 1.1) / 3, 1e-12);
}

TEST(PolicyLoss, MismatchedShapesAreRefused) {
  Case c;
  std::vector<int64_t> wrong = {2, 2};
  EXPECT_THROW(vinci::train::policy_loss(c.logprobs, c.rollout, c.advantages, wrong, {}), std::invalid_argument);
  std::vector<double> one = {1.0};
  EXPECT_THROW(vinci::train::policy_loss(c.logprobs, c.rollout, one, c.lengths, {}), std::invalid_argument);
}

// The loss through a real model: its gradient with respect to the weights must match central
// differences of the loss (float64; rollout logprobs offset so every ratio sits inside the clip
// range or clearly outside it, away from the kinks).
TEST(PolicyLoss, GradientsThroughTheModelMatchFiniteDifferences) {
  const auto fixtures = std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";
  vinci::llm::NativeOptions options;
  options.device = "cpu";
  options.dtype = "float64";
  options.training.mode = vinci::llm::Training::Mode::full;
  auto backbone = vinci::llm::open_native_backbone(fixtures / "models/qwen3", options);
  const auto golden = nlohmann::json::parse(vinci::core::read_file(fixtures / "models/qwen3/golden.json"));
  std::vector<vinci::llm::TrainSequence> sequences;
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < 2; ++i) {
    vinci::llm::TrainSequence s{golden["forced"][i].get<std::vector<int32_t>>(), {}};
    s.loss_mask.assign(s.ids.size(), 0);
    for (size_t t = s.ids.size() / 2; t < s.ids.size(); ++t) s.loss_mask[t] = 1;  // the "response" half
    lengths.push_back(static_cast<int64_t>(s.ids.size() - s.ids.size() / 2));
    sequences.push_back(std::move(s));
  }
  at::Tensor rollout;
  {
    c10::NoGradGuard no_grad;
    auto now = backbone->logprobs(sequences, {});
    // ratios exp(+-0.05) inside [0.8, 1.28], and one token at exp(0.5) ~ 1.65, clipped
    auto offsets = at::full_like(now, 0.05);
    offsets.index_put_({at::arange(0, now.numel(), 2)}, -0.05);
    offsets[0] = -0.5;
    rollout = now + offsets;
  }
  const std::vector<double> advantages = {0.7, -1.3};
  PolicyLossConfig config;
  config.aggregation = LossAggregation::seq_mean_token_mean;
  const auto loss = [&] {
    return vinci::train::policy_loss(backbone->logprobs(sequences, {}), rollout, advantages, lengths, config);
  };
  auto params = backbone->trainable_parameters();
  loss().backward();
  std::mt19937 rng(5);
  int checked = 0;
  for (size_t i = 0; i < params.size(); i += std::max<size_t>(1, params.size() / 5)) {
    auto flat = params[i].view(-1);
    auto grad = params[i].grad().view(-1);
    const int64_t j = std::uniform_int_distribution<int64_t>(0, flat.numel() - 1)(rng);
    const double numeric = vinci::test::central_difference(flat, j, loss);
    EXPECT_NEAR(grad[j].item<double>(), numeric, 1e-7 + 1e-5 * std::abs(numeric))
        << "parameter " << i << " index " << j;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace policy_loss_test
