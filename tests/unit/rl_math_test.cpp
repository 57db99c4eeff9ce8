// The arithmetic of training (src/rl/): every reward shape, discounted returns, the policy's
// TRLOO/RLOO/GRPO advantages on a small (task, turn, scheme) grid, the selection and summary
// leave-one-out advantages, and the MRS/PRS decisions, each against values worked out by hand
// in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "rl/advantage.h"
#include "rl/lr_schedule.h"
#include "rl/rejection.h"
#include "rl/reward.h"

namespace rl_math_test {

using namespace vinci::rl;

// A turn as the policy agent records it; "no_answer" is a turn without a kernel, so without a verdict.
vinci::agents::TurnInputs outcome(std::string_view verdict, double speedup = 0, double coverage = 0,
                                  std::optional<double> speedup_compile = std::nullopt) {
  vinci::agents::TurnInputs t;
  if (verdict != "no_answer") t.verdict = vinci::eval::verdict_from_string(verdict);
  t.speedup = speedup;
  t.coverage = coverage;
  t.speedup_compile = speedup_compile;
  return t;
}

TEST(Reward, DaVinciShape) {
  const RewardConfig c;  // 0.5 correct + 0.5 min(speedup, 6) + 0.5 coverage
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 2.0, 0.8), c), 0.5 + 1.0 + 0.4);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 10.0, 1.0), c), 0.5 + 3.0 + 0.5);  // capped at 6
  EXPECT_DOUBLE_EQ(turn_reward(outcome("incorrect", 3.0, 1.0), c), 0.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("runtime_error"), c), 0.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("compile_error"), c), 0.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("rejected", 50.0, 1.0), c), 0.0);  // a hack earns nothing
  RewardConfig penalised = c;
  penalised.rejected_penalty = -1.0;
  penalised.compile_error_penalty = -0.5;
  EXPECT_DOUBLE_EQ(turn_reward(outcome("rejected", 50.0, 1.0), penalised), -1.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("compile_error"), penalised), -0.5);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("no_answer"), penalised), -0.5);  // no kernel at all
}

TEST(Reward, KevinShape) {
  RewardConfig c;
  c.kind = RewardKind::kevin;  // 0.3 correct + speedup
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 1.5, 0.2), c), 1.8);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 10.0), c), 10.3);  // no cap
  EXPECT_DOUBLE_EQ(turn_reward(outcome("incorrect", 2.0), c), 0.0);
}

TEST(Reward, TieredShape) {
  RewardConfig c;
  c.kind = RewardKind::tiered;  // -1 wrong; 1 correct; 2 beats eager by 5%; 3 beats eager and compile
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 1.02, 1, 3.0), c), 1.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 1.05, 1, 1.0), c), 2.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 1.06), c), 2.0);  // compile not timed
  EXPECT_DOUBLE_EQ(turn_reward(outcome("correct", 1.06, 1, 1.05), c), 3.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("incorrect"), c), -1.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("compile_error"), c), -1.0);
  c.compile_error_penalty = -2.0;
  EXPECT_DOUBLE_EQ(turn_reward(outcome("compile_error"), c), -2.0);
}

TEST(Reward, TurnsOtherThanCorrectEarnTheFailureRewardWhateverTheyMeasured) {
  const RewardConfig c;
  EXPECT_DOUBLE_EQ(turn_reward(outcome("timeout", 5.0, 1.0), c), 0.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("invalid_task", 5.0, 1.0), c), 0.0);
  EXPECT_DOUBLE_EQ(turn_reward(outcome("no_answer", 5.0, 1.0), c), 0.0);
}

TEST(Reward, KindsByName) {
  for (const RewardKind k : {RewardKind::davinci, RewardKind::kevin, RewardKind::tiered})
    EXPECT_EQ(reward_kind_from_name(reward_kind_name(k)), k);
  EXPECT_THROW(reward_kind_from_name("grpo"), std::invalid_argument);
}

TEST(Returns, DiscountedFromTheLastTurnBack) {
  const std::vector<double> r = {1, 2, 3};
  EXPECT_EQ(discounted_returns(r, 1.0), (std::vector<double>{6, 5, 3}));
  // gamma 0.4: G2 = 3, G1 = 2 + 0.4*3 = 3.2, G0 = 1 + 0.4*3.2 = 2.28
  const auto g = discounted_returns(r, 0.4);
  EXPECT_DOUBLE_EQ(g[2], 3.0);
  EXPECT_DOUBLE_EQ(g[1], 3.2);
  EXPECT_DOUBLE_EQ(g[0], 2.28);
  EXPECT_TRUE(discounted_returns({}, 0.4).empty());
}

// Task A: turn 0 has returns 1, 2, 3 (three schemes), turn 1 has 4, 6; task B has one sample.
const std::vector<PolicySample> kGrid = {{"A", 0, 1}, {"A", 0, 2}, {"A", 0, 3}, {"A", 1, 4}, {"A", 1, 6}, {"B", 0, 5}};

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(PolicyAdvantage, TrlooGroupsByTaskAndTurn) {
  AdvantageConfig c;
  // (A,0): 1-(2+3)/2 = -1.5, 2-(1+3)/2 = 0, 3-(1+2)/2 = 1.5; (A,1): 4-6 = -2, 6-4 = 2; (B,0) alone: 0
  expect_near(policy_advantages(kGrid, c), {-1.5, 0, 1.5, -2, 2, 0});
  c.normalize_by_task_mean_abs = true;
  c.eps = 0;
  // task A's mean |A| = (1.5 + 0 + 1.5 + 2 + 2) / 5 = 1.4 (task B is left out: alone, its mean |A| is 0)
  const auto scaled = policy_advantages(std::span(kGrid).first(5), c);
  expect_near(scaled, {-1.5 / 1.4, 0, 1.5 / 1.4, -2 / 1.4, 2 / 1.4});
}

TEST(PolicyAdvantage, RlooGroupsByTaskOnly) {
  AdvantageConfig c;
  c.policy_group = GroupKey::task;
  // task A returns 1,2,3,4,6 (sum 16): G - (16 - G)/4
  expect_near(policy_advantages(kGrid, c), {1 - 3.75, 2 - 3.5, 3 - 3.25, 4 - 3.0, 6 - 2.5, 0});
}

TEST(PolicyAdvantage, GrpoNormalizesWithinTheGroup) {
  AdvantageConfig c;
  c.policy_estimator = Estimator::grpo;
  c.eps = 0;
  // (A,0): mean 2, population std sqrt(2/3); (A,1): mean 5, std 1; (B,0): one sample, std 0 -> 0/0
  const double s = std::sqrt(2.0 / 3.0);
  auto a = policy_advantages(std::span(kGrid).first(5), c);
  expect_near(a, {-1 / s, 0, 1 / s, -1, 1});
  c.std_bessel = true;  // (A,0): sample std 1; (A,1): sqrt(2)
  a = policy_advantages(std::span(kGrid).first(5), c);
  expect_near(a, {-1, 0, 1, -1 / std::sqrt(2.0), 1 / std::sqrt(2.0)});
  c.eps = 1e-6;  // a lone sample: 0 / (0 + eps) = 0
  EXPECT_EQ(policy_advantages(std::span(kGrid).last(1), c), std::vector<double>{0.0});
}

TEST(AgentAdvantage, SelectionAndSummaryLeaveOneOutWithTheirScales) {
  // selection: task A's schemes R = 0.5, 1.0, 1.5 -> 0.5 - 1.25 = -0.75, 0, 0.75; x 0.3; B alone: 0
  const std::vector<GroupedReward> schemes = {{"A", 0.5}, {"A", 1.0}, {"A", 1.5}, {"B", 2.0}};
  expect_near(leave_one_out_advantages(schemes, AdvantageConfig{}.selection_scale), {-0.225, 0, 0.225, 0});
  // summary: task A's calls R = 2.4 (an admitted skill verified at 2.4x) and 0 (none) -> +-2.4, x 0.5
  const std::vector<GroupedReward> summaries = {{"A", 2.4}, {"A", 0.0}};
  expect_near(leave_one_out_advantages(summaries, AdvantageConfig{}.summary_scale), {1.2, -1.2});
}

TEST(Rejection, MrsDropsSequencesThatDrifted) {
  const std::vector<float> same = {-1.0f, -2.0f};
  EXPECT_TRUE(masked_rejection(same, same, {}).keep);
  // every token's log ratio ~ +0.001: geometric mean exp(0.001) ~ 1.0010005 > 1.001
  const std::vector<float> rollout = {-1.001f, -2.001f};
  const auto drifted = masked_rejection(same, rollout, {});
  EXPECT_FALSE(drifted.keep);
  EXPECT_NEAR(drifted.geo_mean_ratio, std::exp(0.001), 1e-6);
  EXPECT_NE(drifted.why.find("geometric-mean ratio"), std::string::npos);
  EXPECT_TRUE(masked_rejection(same, rollout, {0.002, 0.0}).keep);
  // log ratios +0.5 and -0.5: geometric mean 1, but one token's ratio is exp(-0.5) ~ 0.607
  const std::vector<float> trainer = {-1.0f, -5.0f}, sampler = {-1.5f, -4.5f};
  EXPECT_TRUE(masked_rejection(trainer, sampler, {}).keep);
  const auto floored = masked_rejection(trainer, sampler, {0.001, 0.7});
  EXPECT_FALSE(floored.keep);
  EXPECT_NEAR(floored.min_token_ratio, std::exp(-0.5), 1e-9);
  EXPECT_TRUE(masked_rejection({}, {}, {}).keep);
  EXPECT_THROW(masked_rejection(same, std::vector<float>{-1.0f}, {}), std::invalid_argument);
}

TEST(Rejection, PrsKeepsCorrectTurnsByCoverage) {
  const PrsConfig c;  // clip((coverage - 0.3) / 0.1, 0, 1)
  EXPECT_NEAR(prs_keep_probability(true, 0.35, c), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(prs_keep_probability(true, 0.25, c), 0.0);
  EXPECT_DOUBLE_EQ(prs_keep_probability(true, 0.45, c), 1.0);
  EXPECT_DOUBLE_EQ(prs_keep_probability(false, 0.0, c), 1.0);  // only correct turns are thinned
  EXPECT_TRUE(prs_keep(true, 0.35, 0.49, c));
  EXPECT_FALSE(prs_keep(true, 0.35, 0.51, c));
  EXPECT_TRUE(prs_keep(false, 0.0, 0.99, c));
}

TEST(LrSchedule, WarmupThenConstantOrCosine) {
  LrSchedule s;
  s.peak = 1.0;
  s.warmup_steps = 4;
  EXPECT_DOUBLE_EQ(learning_rate(s, 1), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate(s, 4), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 100), 1.0);
  s.shape = LrSchedule::Shape::cosine;
  s.total_steps = 8;
  // progress (k - 4) / 4: k 6 -> 0.5 -> 0.5 (1 + cos(pi/2)) = 0.5; k 8 -> 0; past the end it stays there
  EXPECT_NEAR(learning_rate(s, 6), 0.5, 1e-12);
  EXPECT_NEAR(learning_rate(s, 8), 0.0, 1e-12);
  EXPECT_NEAR(learning_rate(s, 12), 0.0, 1e-12);
  s.min_ratio = 0.1;  // 0.1 + 0.9 x 0.5
  EXPECT_NEAR(learning_rate(s, 6), 0.55, 1e-12);
  EXPECT_THROW(learning_rate(s, 0), std::invalid_argument);
  EXPECT_EQ(lr_shape_from_name("cosine"), LrSchedule::Shape::cosine);
  EXPECT_THROW(lr_shape_from_name("linear"), std::invalid_argument);
}

}  // namespace rl_math_test
