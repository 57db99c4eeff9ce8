// A job's time limit as a training run sees it: a step starts only if it would end in time.
//
// A job's time limit as a training run sees it: a step starts only if it would end in time, judged
// by the slowest step so far. A GPU job that is killed mid-step loses the step and leaves no final/,
// so "no step starts after the deadline" is not enough when one step takes minutes.
#pragma once

#include <algorithm>
#include <chrono>

namespace vinci::rl {

class StepDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StepDeadline(Clock::time_point end) : end_(end) {}

  // Whether a step begun at `now` ends before the deadline if it takes as long as the slowest
  // finished one (the first step: whether the deadline is still ahead).
  bool leaves_room(Clock::time_point now) const { return now + slowest_ < end_; }
  void step_took(Clock::duration d) { slowest_ = std::max(slowest_, d); }

 private:
  Clock::time_point end_;
  Clock::duration slowest_{0};
};

}  // namespace vinci::rl
