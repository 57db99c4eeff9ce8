// What an agent call tells training about its own reward (design.md §6), one record per role. The
// agents fill them as they decide; rl reads them as they are, so the seam between the two layers is
// these types. JSON exists only in episodes.jsonl (agents/episode.cpp), where each record keeps the
// form earlier runs wrote.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "eval/result.h"

namespace vinci::agents {

// A policy turn (or a verifier's rerun): what the evaluator judged its kernel to be.
struct TurnInputs {
  std::optional<eval::Verdict> verdict;   // none: the answer held no kernel (episodes say "no_answer")
  double speedup = 0;                     // over eager; 0 unless correct
  double coverage = 0;                    // the share of the forward's time spent in the candidate's kernels
  std::optional<double> speedup_compile;  // over torch.compile, when correct and compile was timed

  bool correct() const { return verdict == eval::Verdict::correct; }
};

// A selection call: the skills of its scheme, and what the model named that could not be used.
struct SelectionInputs {
  std::vector<std::string> skills;
  std::vector<std::string> dropped;  // each with why, e.g. "made_up (not in the list)"
};

struct AdmittedSkill {
  std::string skill;
  double speedup = 0;  // the verified speedup the skill was admitted with
};

// A summary call: the skills it proposed, those refused before verification, and those the
// verifier admitted (known only after verification).
struct SummaryInputs {
  std::vector<std::string> proposed;
  std::vector<std::string> refused;
  std::vector<AdmittedSkill> admitted;
};

// monostate: a call whose inputs were never recorded (its episode says {}).
using RewardInputs = std::variant<std::monostate, TurnInputs, SelectionInputs, SummaryInputs>;

}  // namespace vinci::agents
