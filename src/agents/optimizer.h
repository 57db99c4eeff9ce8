// The inference-time loop of `vinci optimize`: selection, rollouts, summary, verification.
//
// The inference-time loop of `vinci optimize` (design.md §5): skill selection, policy rollouts
// under a strategy, summaries of rollouts that clearly improved, verification of what they propose.
//
// Strategies spend the same budget of (schemes x samples x turns) attempts differently:
//   serial   samples rollouts per scheme, each refined over T turns with feedback (Kevin found this
//            beats parallel sampling at equal budget);
//   parallel samples x T independent single-turn attempts per scheme;
//   beam     after each turn, keeps the beam_width best latest kernels of the task and refines each
//            into an equal share of the next turn's attempts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/episode.h"
#include "agents/kernel_evaluator.h"
#include "agents/policy_agent.h"
#include "agents/prompts.h"
#include "agents/selection_agent.h"
#include "agents/summary_agent.h"
#include "agents/verifier.h"
#include "skills/library.h"
#include "skills/store.h"

namespace vinci::agents {

enum class Strategy { serial, parallel, beam };
std::string_view to_string(Strategy s);
Strategy strategy_from_string(std::string_view s);  // throws std::invalid_argument naming it

struct OptimizeSettings {
  Strategy strategy = Strategy::serial;
  int samples = 1;  // rollouts per scheme
  int beam_width = 2;
  bool summarize = true;  // run the summary agent and the verifier
  SelectionSettings selection;
  PolicySettings policy;
  SummarySettings summary;
  VerifySettings verify;
  skills::SearchFilter filter;
  uint64_t seed = 0;
};

struct OptimizeOutcome {
  std::vector<SkillScheme> schemes;
  std::vector<std::string> shown;  // the skill headers selection saw
  std::vector<Rollout> rollouts;
  std::vector<SummaryOutcome> summaries;
  std::vector<VerificationOutcome> verifications;
  Episode episode;
  // The fastest correct attempt, if any: indices into rollouts and its turns.
  std::optional<std::pair<size_t, size_t>> best;
  const PolicyTurn* best_turn() const;
};

using ProgressFn = std::function<void(const std::string&)>;

OptimizeOutcome optimize(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts,
                         const skills::Library& library, const PolicyTask& task, const OptimizeSettings& settings,
                         const ProgressFn& progress = {});

// The skills the verifier admitted, each with its verification record and the episode it came from.
std::vector<skills::Skill> admitted_skills(const OptimizeOutcome& outcome);

// Writes what the run proved into the store: each admitted skill with its verification record,
// and the usage sums of the skills the rollouts carried. Returns what admission did.
std::vector<skills::Admission> record_in_library(skills::SkillStore& store, const OptimizeOutcome& outcome);

}  // namespace vinci::agents
