#include "rl/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::rl {

LrSchedule::Shape lr_shape_from_name(const std::string& name) {
  if (name == "constant") return LrSchedule::Shape::constant;
  if (name == "cosine") return LrSchedule::Shape::cosine;
  throw std::invalid_argument(fmt::format("learning-rate schedule '{}' is not one of constant, cosine", name));
}

double learning_rate(const LrSchedule& s, int64_t step) {
  if (step < 1) throw std::invalid_argument(fmt::format("learning_rate: steps count from 1, got {}", step));
  if (step <= s.warmup_steps) return s.peak * static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  if (s.shape == LrSchedule::Shape::constant || s.total_steps <= s.warmup_steps) return s.peak;
  const double progress =
      std::min(1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(s.total_steps - s.warmup_steps));
  const double floor = s.min_ratio * s.peak;
  return floor + (s.peak - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace vinci::rl
