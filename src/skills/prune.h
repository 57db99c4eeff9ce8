// Utility-based pruning: a skill that does not raise the reward is retired.
//
// Utility-based pruning: a skill whose injection does not raise the reward, over enough rollouts
// with and without it, is retired so the library does not fill with noise.
#pragma once

#include <string>
#include <vector>

#include "skills/skill.h"

namespace vinci::skills {

struct PruneParams {
  int64_t min_injected = 20;      // rollouts that carried the skill before it can be judged
  int64_t min_not_injected = 20;  // rollouts of the same tasks without it, to compare against
  double min_gain = 0.0;          // retire when mean reward with − without is below this
};

struct PruneDecision {
  std::string name;
  bool retire = false;
  std::string reason;
};

// One decision per admitted skill, in the order given; other statuses are left out.
std::vector<PruneDecision> decide_pruning(const std::vector<Skill>& skills, const PruneParams& params);

}  // namespace vinci::skills
