// The learning rate of each optimizer step: a linear warm-up, then constant or cosine.
//
// The learning rate of each optimizer step: a linear warm-up from 0, then constant or a cosine
// decay to min_ratio x the peak at total_steps.
#pragma once

#include <cstdint>
#include <string>

namespace vinci::rl {

struct LrSchedule {
  double peak = 1e-6;
  int64_t warmup_steps = 0;
  enum class Shape { constant, cosine } shape = Shape::constant;
  int64_t total_steps = 0;  // cosine: the step the decay ends at
  double min_ratio = 0.0;   // cosine: the floor, as a fraction of the peak
};

std::string_view to_string(LrSchedule::Shape shape);
LrSchedule::Shape lr_shape_from_string(std::string_view s);  // "constant" | "cosine"; throws naming it

// step counts from 1 (the first update).
double learning_rate(const LrSchedule& schedule, int64_t step);

}  // namespace vinci::rl
