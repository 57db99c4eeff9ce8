// Discounted returns, the policy's TRLOO/RLOO/GRPO advantages on a small (task, turn, scheme) grid,
// and the selection and summary leave-one-out advantages (rl/advantage.h), each against values
// worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "rl/advantage.h"
#include "support/expect_near.h"

namespace advantage_test {

using namespace vinci::rl;
using vinci::test::expect_near;

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

}  // namespace advantage_test
