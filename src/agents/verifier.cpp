#include "agents/verifier.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/feedback.h"

namespace vinci::agents {

std::vector<VerificationOutcome> verify_skills(llm::Backbone& backbone, KernelEvaluator& evaluator,
                                               const Prompts& prompts, const PolicyTask& task, const Rollout& origin,
                                               const std::vector<skills::Skill>& proposals,
                                               const VerifySettings& settings, uint64_t seed) {
  std::vector<VerificationOutcome> out(proposals.size());
  const double base = origin.turns.empty() ? 0.0 : origin.turns.front().speedup();
  const double bar = std::max(settings.min_speedup, settings.min_ratio * base);
  std::vector<Rollout*> batch;
  for (size_t i = 0; i < proposals.size(); ++i) {
    out[i].skill = proposals[i];
    for (int k = 0; k < settings.repeats; ++k) {
      Rollout r;
      r.label = fmt::format("verify_{}_{}_r{}", origin.label, proposals[i].name, k);
      r.scheme = origin.scheme;
      r.sample = origin.sample;
      r.skills = origin.skills;
      r.skills.push_back(proposals[i]);
      out[i].repeats.push_back(std::move(r));
    }
  }
  for (auto& o : out)
    for (auto& r : o.repeats) batch.push_back(&r);

  PolicySettings greedy;
  greedy.turns = 1;
  greedy.seed = seed;
  greedy.sampling.greedy = true;
  greedy.sampling.temperature = 0.0;
  greedy.sampling.max_new_tokens = settings.max_new_tokens;
  StrategyMemory no_memory;  // turn 1 as it was: the original had no memory yet
  policy_turn(backbone, evaluator, prompts, task, batch, no_memory, greedy, {Role::verify, /*fresh=*/true});

  for (auto& o : out) {
    skills::Verification& v = o.record;
    v.task = task.task.id;
    v.base_speedup = base;
    v.repeats = settings.repeats;
    v.correct = !o.repeats.empty();
    v.skill_speedup = o.repeats.empty() ? 0.0 : 1e300;
    for (const Rollout& r : o.repeats) {
      const PolicyTurn& t = r.turns.front();
      v.correct = v.correct && t.result && t.result->correct();
      v.skill_speedup = std::min(v.skill_speedup, t.speedup());
      if (t.result) v.gpu = t.result->device;
    }
    v.at = skills::utc_now();
    o.admitted = v.correct && v.skill_speedup >= bar;
    if (!v.correct)
      o.why = "a repeat with the skill was not correct";
    else
      o.why = fmt::format("worst repeat {:.2f}x {} the bar of {:.2f}x (max({:.2f}, {:.2f} x turn-1 {:.2f}x))",
                          v.skill_speedup, o.admitted ? "reaches" : "misses", bar, settings.min_speedup,
                          settings.min_ratio, base);
  }
  return out;
}

}  // namespace vinci::agents
