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

TurnOutcome turn_outcome_from_json(const nlohmann::json& j) {
  const auto number = [&](const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return 0.0;
    if (!it->is_number()) throw std::invalid_argument(fmt::format("reward_inputs.{} must be a number, got {}", key, it->dump()));
    return it->get<double>();
  };
  if (!j.is_object() || !j.contains("verdict") || !j["verdict"].is_string())
    throw std::invalid_argument(fmt::format("reward_inputs needs a string 'verdict', got {}", j.dump()));
  TurnOutcome o;
  o.verdict = j["verdict"].get<std::string>();
  o.speedup_eager = number("speedup");
  o.coverage = number("coverage");
  if (j.contains("speedup_compile") && !j["speedup_compile"].is_null()) o.speedup_compile = number("speedup_compile");
  return o;
}

double turn_reward(const TurnOutcome& o, const RewardConfig& c) {
  const double failure = c.kind == RewardKind::tiered ? -1.0 : 0.0;
  if (o.verdict == "compile_error" || o.verdict == "no_answer") return c.compile_error_penalty.value_or(failure);
  if (o.verdict == "rejected") return c.rejected_penalty.value_or(failure);
  if (o.verdict != "correct") return failure;
  switch (c.kind) {
    case RewardKind::davinci:
      return c.correct_weight + c.speedup_weight * std::min(o.speedup_eager, c.speedup_cap) +
             c.coverage_weight * o.coverage;
    case RewardKind::kevin: return c.kevin_correct_weight + o.speedup_eager;
    case RewardKind::tiered: {
      const double beat = 1.0 + c.tier_margin;
      if (o.speedup_eager < beat) return 1.0;
      return o.speedup_compile && *o.speedup_compile >= beat ? 3.0 : 2.0;
    }
  }
  return failure;
}

}  // namespace vinci::rl
