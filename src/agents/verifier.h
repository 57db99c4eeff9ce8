// The verifier: a proposed skill enters the library only when it reproduces a speedup.
//
// The verifier (design.md §5): a proposed skill enters the library only when execution shows it
// reproduces a speedup. Turn 1 of the rollout it came from is rerun greedily with the skill appended
// to the skills that rollout had; each repeat is measured afresh.
#pragma once

#include <string>
#include <vector>

#include "agents/episode.h"
#include "agents/kernel_evaluator.h"
#include "agents/policy_agent.h"
#include "agents/prompts.h"
#include "llm/backbone.h"
#include "skills/skill.h"

namespace vinci::agents {

struct VerifySettings {
  int repeats = 2;           // r: each a greedy generation and a fresh measurement
  double min_speedup = 1.2;  // admitted when every repeat is correct and reaches
  double min_ratio = 1.2;    //   max(min_speedup, min_ratio x the original turn-1 speedup)
  int max_new_tokens = 8192;
};

struct VerificationOutcome {
  skills::Skill skill;
  bool admitted = false;
  std::string why;               // the decision in words
  skills::Verification record;   // base and worst repeat speedup, for the library
  std::vector<Rollout> repeats;  // one single-turn rollout per repeat
};

// Verifies each skill against the rollout it was distilled from: all repeats of all skills go out
// as one batched turn.
std::vector<VerificationOutcome> verify_skills(llm::Backbone& backbone, KernelEvaluator& evaluator,
                                               const Prompts& prompts, const PolicyTask& task, const Rollout& origin,
                                               const std::vector<skills::Skill>& proposals,
                                               const VerifySettings& settings, uint64_t seed = 0);

}  // namespace vinci::agents
