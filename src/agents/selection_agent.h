// The selection agent: BM25 recall of skill headers, then the model picks at most 3.
//
// The selection agent (design.md §5): BM25 recall of skill headers for a task, then the model picks
// at most 3 with select_skills(think, selected_skills[{name, reason}]). It is sampled k times, and a
// null scheme without skills is always added.
#pragma once

#include <string>
#include <vector>

#include "agents/episode.h"
#include "agents/prompts.h"
#include "eval/task.h"
#include "llm/backbone.h"
#include "skills/library.h"

namespace vinci::agents {

struct SelectionSettings {
  size_t top_n = 20;      // skill headers shown
  size_t max_skills = 3;  // a scheme's skills
  int schemes = 3;        // sampled schemes, before the null one
  llm::SamplingParams sampling = [] {
    llm::SamplingParams s;
    s.temperature = 1.0;
    s.max_new_tokens = 2048;
    return s;
  }();
  uint64_t seed = 0;  // scheme i samples with seed + i
};

struct SkillScheme {
  int index = 0;  // 0..k-1 sampled; k: the null scheme
  bool null_scheme = false;
  std::vector<std::string> skills;   // names from the shown list, in the model's order
  std::vector<std::string> reasons;  // one per skill
  std::vector<std::string> dropped;  // what the model named that could not be used, with why
};

struct SelectionOutcome {
  std::vector<SkillScheme> schemes;  // k sampled, then the null scheme
  std::vector<AgentCall> calls;      // one per sampled scheme
  std::vector<std::string> shown;    // the skill names the model saw, best first
};

// The select_skills tool as an OpenAI function schema.
nlohmann::ordered_json select_skills_tool();

// The library's full text of a scheme's skills, in the scheme's order.
std::vector<skills::Skill> skills_of(const skills::Library& library, const SkillScheme& scheme);

SelectionOutcome select_skills(llm::Backbone& backbone, const Prompts& prompts, const skills::Library& library,
                               const eval::Task& task, const SelectionSettings& settings,
                               const skills::SearchFilter& filter = {});

}  // namespace vinci::agents
