// The summary agent: a rollout that clearly improved, distilled into at most 2 skills.
//
// The summary agent (design.md §5): distills a rollout that clearly improved on its first correct
// kernel into at most 2 reusable skills, answered as update_skill_library(think, new_skills[...]).
// Each proposal is checked by the skill record's rules and screened (skill_screen.h); what survives
// goes to the verifier.
#pragma once

#include <string>
#include <vector>

#include "agents/episode.h"
#include "agents/policy_agent.h"
#include "agents/prompts.h"
#include "llm/backbone.h"
#include "skills/skill.h"

namespace vinci::agents {

struct SummarySettings {
  // Triggered when turn 1 was correct and the best turn reached both min_ratio x turn 1 and
  // min_speedup over eager.
  double min_ratio = 1.2;
  double min_speedup = 1.2;
  size_t max_skills = 2;
  size_t max_code_chars = 12'000;  // per turn shown in the trajectory
  llm::SamplingParams sampling = [] {
    llm::SamplingParams s;
    s.temperature = 1.0;
    s.max_new_tokens = 4096;
    return s;
  }();
  uint64_t seed = 0;
};

bool summary_triggered(const Rollout& rollout, const SummarySettings& settings);

nlohmann::ordered_json update_skill_library_tool();

struct SkillProposal {
  skills::Skill skill;
  std::string refused;  // why it was refused (validation or screening); empty: it goes to the verifier
};

struct SummaryOutcome {
  const Rollout* rollout = nullptr;
  std::vector<SkillProposal> proposals;
  AgentCall call;
};

// One batched call per triggered rollout. Proposals carry provenance (task, model).
std::vector<SummaryOutcome> summarize(llm::Backbone& backbone, const Prompts& prompts, const PolicyTask& task,
                                      const std::vector<const Rollout*>& rollouts, const SummarySettings& settings);

}  // namespace vinci::agents
