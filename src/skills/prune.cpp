#include "skills/prune.h"

#include <fmt/format.h>

namespace vinci::skills {

std::vector<PruneDecision> decide_pruning(const std::vector<Skill>& skills, const PruneParams& params) {
  std::vector<PruneDecision> decisions;
  for (const Skill& s : skills) {
    if (s.status != Status::admitted) continue;
    PruneDecision d{s.name, false, ""};
    const Usage& u = s.usage;
    if (u.reward_injected_count < params.min_injected) {
      d.reason =
          fmt::format("kept: {} rewarded injections, {} needed to judge", u.reward_injected_count, params.min_injected);
    } else if (u.reward_not_injected_count < params.min_not_injected) {
      d.reason = fmt::format("kept: {} rollouts without it to compare against, {} needed", u.reward_not_injected_count,
                             params.min_not_injected);
    } else {
      const double with = *u.mean_reward_injected(), without = *u.mean_reward_not_injected();
      const double gain = with - without;
      d.retire = gain < params.min_gain;
      d.reason =
          fmt::format("{}: mean reward {:.3f} with it ({} rollouts) vs {:.3f} without ({}), gain {:+.3f} {} {:+.3f}",
                      d.retire ? "retire" : "kept", with, u.reward_injected_count, without, u.reward_not_injected_count,
                      gain, d.retire ? "<" : ">=", params.min_gain);
    }
    decisions.push_back(std::move(d));
  }
  return decisions;
}

}  // namespace vinci::skills
