#include "rl/reward.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::rl {

const char* reward_kind_name(RewardKind kind) {
  switch (kind) {
    case RewardKind::davinci: return "davinci";
    case RewardKind::kevin: return "kevin";
    case RewardKind::tiered: return "tiered";
  }
  return "?";
}

RewardKind reward_kind_from_name(const std::string& name) {
  for (const RewardKind k : {RewardKind::davinci, RewardKind::kevin, RewardKind::tiered})
    if (name == reward_kind_name(k)) return k;
  throw std::invalid_argument(fmt::format("reward '{}' is not one of davinci, kevin, tiered", name));
}

double turn_reward(const agents::TurnInputs& o, const RewardConfig& c) {
  const double failure = c.kind == RewardKind::tiered ? -1.0 : 0.0;
  if (!o.verdict || *o.verdict == eval::Verdict::compile_error) return c.compile_error_penalty.value_or(failure);
  if (*o.verdict == eval::Verdict::rejected) return c.rejected_penalty.value_or(failure);
  if (!o.correct()) return failure;
  switch (c.kind) {
    case RewardKind::davinci:
      return c.correct_weight + c.speedup_weight * std::min(o.speedup, c.speedup_cap) +
             c.coverage_weight * o.coverage;
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
