// Warmup, then a constant or cosine learning rate (rl/lr_schedule.h).
#include <gtest/gtest.h>

#include "rl/lr_schedule.h"

namespace lr_schedule_test {

using namespace vinci::rl;

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
  EXPECT_EQ(lr_shape_from_string("cosine"), LrSchedule::Shape::cosine);
  EXPECT_THROW(lr_shape_from_string("linear"), std::invalid_argument);
}

}  // namespace lr_schedule_test
