#include "rl/reward.h"
#include "core/enum_names.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::rl {

namespace {
constexpr std::array<core::EnumName<RewardKind>, 3> kRewardKinds{
    {{RewardKind::davinci, "davinci"}, {RewardKind::kevin, "kevin"}, {RewardKind::tiered, "tiered"}}};
}  // namespace

std::string_view to_string(RewardKind kind) { return core::enum_to_string(kRewardKinds, kind); }

RewardKind reward_kind_from_string(std::string_view s) { return core::enum_from_string(kRewardKinds, s, "reward"); }

double turn_reward(const agents::TurnInputs& o, const RewardConfig& c) {
  const double failure = c.kind == RewardKind::tiered ? -1.0 : 0.0;
  if (!o.verdict || *o.verdict == eval::Verdict::compile_error) return c.compile_error_penalty.value_or(failure);
  if (*o.verdict == eval::Verdict::rejected) return c.rejected_penalty.value_or(failure);
  if (!o.correct()) return failure;
  switch (c.kind) {
    case RewardKind::davinci:
      return c.correct_weight + c.speedup_weight * std::min(o.speedup, c.speedup_cap) + c.coverage_weight * o.coverage;
    case RewardKind::kevin: return c.kevin_correct_weight + o.speedup;
    case RewardKind::tiered: {
      const double beat = 1.0 + c.tier_margin;
      if (o.speedup < beat) return 1.0;
      return o.speedup_compile && *o.speedup_compile >= beat ? 3.0 : 2.0;
    }
  }
  return failure;
}

}  // namespace vinci::rl
