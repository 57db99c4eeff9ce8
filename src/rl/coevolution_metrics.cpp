#include "rl/coevolution_metrics.h"

#include <utility>

#include <fmt/format.h>

namespace vinci::rl {

nlohmann::json to_json(const CoevolutionMetrics& m) {
  nlohmann::json j = {{"step", m.step},
                      {"epoch", m.epoch},
                      {"tasks", m.tasks},
                      {"fast_1", m.fast_1},
                      {"samples", m.samples},
                      {"trained_samples", m.trained_samples},
                      {"untrainable_calls", m.untrainable_calls},
                      {"pg_loss", m.pg_loss},
                      {"clip_fraction_low", m.clip_fraction_low},
                      {"clip_fraction_high", m.clip_fraction_high},
                      {"grad_norm", m.grad_norm},
                      {"lr", m.lr},
                      {"logprob_diff", m.logprob_diff},
                      {"entropy", m.entropy},
                      {"mrs_rejected", m.mrs_rejected},
                      {"prs_rejected", m.prs_rejected},
                      {"skills_proposed", m.skills_proposed},
                      {"skills_verified", m.skills_verified},
                      {"skills_admitted", m.skills_admitted},
                      {"library_size", m.library_size},
                      {"train_tokens", m.train_tokens},
                      {"tokens_per_s", m.tokens_per_s},
                      {"mfu", m.mfu},
                      {"ranks", m.ranks},
                      {"generate_s", m.generate_s},
                      {"evaluate_s", m.evaluate_s},
                      {"train_s", m.train_s},
                      {"step_s", m.step_s},
                      {"candidates", m.candidates},
                      {"candidates_measured", m.candidates_measured},
                      {"candidates_per_min", m.candidates_per_min}};
  const std::pair<const char*, const RoleStats*> roles[] = {
      {"policy", &m.policy}, {"selection", &m.selection}, {"summary", &m.summary}};
  for (const auto& [role, stats] : roles) {
    j[fmt::format("reward_mean_{}", role)] = stats->reward_mean;
    j[fmt::format("reward_std_{}", role)] = stats->reward_std;
    j[fmt::format("response_tokens_{}", role)] = stats->response_tokens;
  }
  if (m.heldout) {
    j["heldout_tasks"] = m.heldout->tasks;
    j["heldout_correct"] = m.heldout->correct;
    j["heldout_fast_1"] = m.heldout->fast_1;
  }
  return j;
}

}  // namespace vinci::rl
