// The procedural teacher as a Backbone answering the agents' own prompts for curriculum tasks.
//
// The procedural teacher as a model (issue 16, item 3): a Backbone that answers the agents' own
// prompts for curriculum tasks, so that agents::optimize runs the teacher through selection, policy
// turns with real evaluation feedback, summary and verification, and its episodes are SFT data in
// exactly the format a trained model then meets.
//
// The teacher is deliberately middling, so that SFT lands far from the best and RL has room: a
// policy turn picks one of the task's strategies at random, follows an injected skill it knows only
// with probability follow_skill, writes a wrong strategy first with probability wrong_first, and after
// a turn repairs a wrong kernel but otherwise tries another strategy at random rather than reading
// the measured speed. Selection picks the shown skills that fit the task's family, plus a random
// one; the summary proposes the skill of the fastest correct turn's strategy, when it has one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "curriculum/generator.h"
#include "curriculum/teacher.h"
#include "llm/backbone.h"
#include "skills/skill.h"

namespace vinci::agents {

struct TeacherSettings {
  double follow_skill = 0.5;  // a policy turn follows an injected skill it knows
  double wrong_first = 0.2;   // the first turn writes a wrong strategy (then repairs it)
  uint64_t seed = 0;
};

// The teacher's skill (by name, in skills/curriculum.jsonl) of a strategy on a task, if the strategy
// is a technique worth a skill: one fused kernel for a chain, wide blocks, a program per row, several
// rows a program. Empty for the others (per-op launches, small blocks, the wrong ones).
std::string teacher_skill_of(const curriculum::TaskSpec& spec, const curriculum::Strategy& strategy);

class TeacherBackbone final : public llm::Backbone {
 public:
  // skills: the teacher's own (skills/curriculum.jsonl), proposed by its summaries.
  TeacherBackbone(std::vector<curriculum::CurriculumTask> tasks, std::vector<skills::Skill> skills,
                  TeacherSettings settings);

  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override;
  std::string model_name() const override { return "procedural-teacher"; }

  // The answer to one request; throws std::invalid_argument for a request that names no curriculum
  // task (the teacher knows nothing else).
  std::string answer(const llm::GenerationRequest& request) const;

 private:
  const curriculum::CurriculumTask& task_in(const std::string& text) const;
  std::string policy_answer(const llm::GenerationRequest& request) const;
  std::string selection_answer(const llm::GenerationRequest& request) const;
  std::string summary_answer(const llm::GenerationRequest& request) const;

  std::vector<curriculum::CurriculumTask> tasks_;
  std::vector<std::string> sources_;  // each task's problem file, as the prompts quote it
  std::map<std::string, skills::Skill> skills_;
  TeacherSettings settings_;
};

}  // namespace vinci::agents
