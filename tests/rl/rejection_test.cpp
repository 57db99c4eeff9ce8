// The MRS/PRS decisions (rl/rejection.h), against values worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "rl/rejection.h"

namespace rejection_test {

using namespace vinci::rl;

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

}  // namespace rejection_test
