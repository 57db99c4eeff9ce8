// A co-evolution step's metrics line (src/rl/coevolution_metrics): every key of metrics.jsonl, as
// docs/, `vinci plot` and the CLI tests read them, with the value of its field.
#include <gtest/gtest.h>

#include "rl/coevolution_metrics.h"

namespace coevolution_metrics_test {

using nlohmann::json;

TEST(CoevolutionMetrics, TheLineHoldsEveryFieldUnderItsKey) {
  vinci::rl::CoevolutionMetrics m;
  m.step = 3;
  m.epoch = 2;
  m.tasks = 4;
  m.fast_1 = 0.25;
  m.samples = 40;
  m.trained_samples = 31;
  m.untrainable_calls = 1;
  m.pg_loss = -0.5;
  m.clip_fraction_low = 0.125;
  m.clip_fraction_high = 0.0625;
  m.grad_norm = 1.5;
  m.lr = 1e-6;
  m.logprob_diff = 0.01;
  m.entropy = 0.75;
  m.mrs_rejected = 2;
  m.prs_rejected = 7;
  m.skills_proposed = 5;
  m.skills_verified = 3;
  m.skills_admitted = 1;
  m.library_size = 12;
  m.train_tokens = 9000;
  m.tokens_per_s = 4500;
  m.mfu = 0.375;
  m.ranks = 2;
  m.generate_s = 10;
  m.evaluate_s = 20;
  m.train_s = 2;
  m.step_s = 33;
  m.candidates = 24;
  m.candidates_measured = 20;
  m.candidates_per_min = 72;
  m.policy = {1.5, 0.5, 300};
  m.selection = {0.25, 0.125, 40};
  m.summary = {2.0, 0.0, 120};
  const json expected = json::parse(R"({
    "step": 3, "epoch": 2, "tasks": 4, "fast_1": 0.25, "samples": 40, "trained_samples": 31, "untrainable_calls": 1,
    "pg_loss": -0.5, "clip_fraction_low": 0.125, "clip_fraction_high": 0.0625, "grad_norm": 1.5, "lr": 1e-6,
    "logprob_diff": 0.01, "entropy": 0.75, "mrs_rejected": 2, "prs_rejected": 7, "skills_proposed": 5,
    "skills_verified": 3, "skills_admitted": 1, "library_size": 12, "train_tokens": 9000, "tokens_per_s": 4500.0,
    "mfu": 0.375, "ranks": 2, "generate_s": 10.0, "evaluate_s": 20.0, "train_s": 2.0, "step_s": 33.0,
    "candidates": 24, "candidates_measured": 20, "candidates_per_min": 72.0,
    "reward_mean_policy": 1.5, "reward_std_policy": 0.5, "response_tokens_policy": 300.0,
    "reward_mean_selection": 0.25, "reward_std_selection": 0.125, "response_tokens_selection": 40.0,
    "reward_mean_summary": 2.0, "reward_std_summary": 0.0, "response_tokens_summary": 120.0})");
  const json line = to_json(m);
  EXPECT_EQ(line.size(), 40u);
  for (const auto& [key, value] : expected.items()) {
    ASSERT_TRUE(line.contains(key)) << key;
    EXPECT_DOUBLE_EQ(line[key].get<double>(), value.get<double>()) << key;
  }
  // Counts stay integers in the file, as they always were.
  EXPECT_TRUE(line["step"].is_number_integer());
  EXPECT_TRUE(line["trained_samples"].is_number_integer());
  EXPECT_TRUE(line["ranks"].is_number_integer());
  EXPECT_TRUE(line["train_tokens"].is_number_integer());
  EXPECT_TRUE(line["tokens_per_s"].is_number_float());
}

}  // namespace coevolution_metrics_test
