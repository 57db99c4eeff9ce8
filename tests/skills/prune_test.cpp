// Utility-based pruning: a skill is judged only on enough evidence, and retired below the gain bar.
#include "skills/prune.h"

#include <gtest/gtest.h>

namespace prune_test {
using namespace vinci::skills;

Skill with_rewards(const std::string& name, int64_t n_in, double mean_in, int64_t n_out, double mean_out) {
  Skill s;
  s.name = name;
  s.status = Status::admitted;
  s.usage.reward_injected_count = n_in;
  s.usage.reward_injected_sum = mean_in * n_in;
  s.usage.reward_not_injected_count = n_out;
  s.usage.reward_not_injected_sum = mean_out * n_out;
  return s;
}

TEST(Prune, DecisionsNeedEnoughEvidenceAndAGain) {
  const auto with = [](const std::string& name, int64_t n_in, double mean_in, int64_t n_out, double mean_out) {
    Skill s;
    s.name = name;
    s.status = Status::admitted;
    s.usage.reward_injected_count = n_in;
    s.usage.reward_injected_sum = mean_in * n_in;
    s.usage.reward_not_injected_count = n_out;
    s.usage.reward_not_injected_sum = mean_out * n_out;
    return s;
  };
  Skill retired = with("already_retired", 100, 0, 100, 1);
  retired.status = Status::retired;
  const auto d = decide_pruning({with("helps", 30, 1.2, 30, 1.0), with("hurts", 30, 0.8, 30, 1.0),
                                 with("too_new", 5, 0.0, 30, 1.0), with("no_baseline", 30, 0.0, 3, 1.0), retired},
                                {20, 20, 0.0});
  ASSERT_EQ(d.size(), 4u);  // only admitted skills are judged
  EXPECT_FALSE(d[0].retire);
  EXPECT_TRUE(d[1].retire);
  EXPECT_NE(d[1].reason.find("-0.200"), std::string::npos) << d[1].reason;
  EXPECT_FALSE(d[2].retire);
  EXPECT_NE(d[2].reason.find("5 rewarded injections"), std::string::npos) << d[2].reason;
  EXPECT_FALSE(d[3].retire);
  // A higher bar retires what merely does not hurt.
  EXPECT_TRUE(decide_pruning({with("flat", 30, 1.0, 30, 1.0)}, {20, 20, 0.05})[0].retire);
}

TEST(Prune, TheEvidenceThresholdsAreInclusive) {
  // Exactly min_injected and min_not_injected rollouts are enough to judge.
  const auto d = decide_pruning({with_rewards("judged", 20, 0.5, 20, 1.0)}, {20, 20, 0.0});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].retire);
  EXPECT_EQ(d[0].name, "judged");
  // 0.5 - 1.0 = -0.5, below the bar of +0.0: the reason shows both means, counts and the comparison.
  EXPECT_EQ(d[0].reason, "retire: mean reward 0.500 with it (20 rollouts) vs 1.000 without (20), gain -0.500 < +0.000");
}

TEST(Prune, AGainExactlyAtTheBarIsKept) {
  // gain 0.25 - 0.0 = 0.25, bar 0.25: retire only when strictly below (exact in binary).
  const auto d = decide_pruning({with_rewards("at_bar", 40, 0.25, 40, 0.0)}, {20, 20, 0.25});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].retire);
  EXPECT_NE(d[0].reason.find(">= +0.250"), std::string::npos) << d[0].reason;
}

TEST(Prune, MissingBaselineNamesBothCounts) {
  const auto d = decide_pruning({with_rewards("new_task", 25, 2.0, 7, 1.0)}, {20, 20, 0.0});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].retire);
  EXPECT_EQ(d[0].reason, "kept: 7 rollouts without it to compare against, 20 needed");
}

TEST(Prune, CandidatesAndRetiredSkillsAreNotJudged) {
  Skill candidate = with_rewards("candidate", 100, 0.0, 100, 1.0);
  candidate.status = Status::candidate;
  Skill retired = with_rewards("retired", 100, 0.0, 100, 1.0);
  retired.status = Status::retired;
  EXPECT_TRUE(decide_pruning({candidate, retired}, {}).empty());
  EXPECT_TRUE(decide_pruning({}, {}).empty());
}
}  // namespace prune_test
