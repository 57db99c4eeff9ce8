#include "rl/lr_schedule.h"
#include "core/enum_names.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::rl {

namespace {
constexpr std::array<core::EnumName<LrSchedule::Shape>, 2> kShapes{
    {{LrSchedule::Shape::constant, "constant"}, {LrSchedule::Shape::cosine, "cosine"}}};
}  // namespace

std::string_view to_string(LrSchedule::Shape shape) { return core::enum_to_string(kShapes, shape); }

LrSchedule::Shape lr_shape_from_string(std::string_view s) {
  return core::enum_from_string(kShapes, s, "learning-rate schedule");
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
