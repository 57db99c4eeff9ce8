// A step starts only if the slowest step so far would end before the deadline (rl/step_deadline.h).
#include <gtest/gtest.h>

#include "rl/step_deadline.h"

namespace step_deadline_test {

using namespace vinci::rl;
using std::chrono::seconds;

TEST(StepDeadline, AStepStartsOnlyIfTheSlowestSoFarWouldEndInTime) {
  const StepDeadline::Clock::time_point t0{};
  StepDeadline d(t0 + seconds(600));
  // No step has run: only the deadline itself counts.
  EXPECT_TRUE(d.leaves_room(t0 + seconds(599)));
  EXPECT_FALSE(d.leaves_room(t0 + seconds(600)));
  d.step_took(seconds(120));
  d.step_took(seconds(330));                       // the slowest so far
  d.step_took(seconds(60));                        // a faster one does not lower the estimate
  EXPECT_TRUE(d.leaves_room(t0 + seconds(269)));   // 269 + 330 = 599
  EXPECT_FALSE(d.leaves_room(t0 + seconds(270)));  // 270 + 330 = 600: it would end on the deadline
}

}  // namespace step_deadline_test
