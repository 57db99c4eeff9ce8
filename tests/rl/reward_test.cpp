// Every reward shape of a turn (rl/reward.h), against values worked out by hand in the comments.
#include <gtest/gtest.h>

#include "rl/reward.h"

namespace reward_test {

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
    EXPECT_EQ(reward_kind_from_string(to_string(k)), k);
  EXPECT_THROW(reward_kind_from_string("grpo"), std::invalid_argument);
}

}  // namespace reward_test
