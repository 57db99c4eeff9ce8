#include "agents/summary_agent.h"

#include <fmt/format.h>

#include "agents/feedback.h"
#include "agents/output_parser.h"
#include "agents/skill_screen.h"

namespace vinci::agents {

using nlohmann::ordered_json;

bool summary_triggered(const Rollout& r, const SummarySettings& s) {
  if (r.turns.empty() || !r.turns.front().result || !r.turns.front().result->correct()) return false;
  const double first = r.turns.front().speedup();
  const double best = r.best_speedup();
  return best >= s.min_speedup && best >= s.min_ratio * first;
}

ordered_json update_skill_library_tool() {
  return ordered_json::parse(R"({
    "type": "function",
    "function": {
      "name": "update_skill_library",
      "description": "Add at most 2 reusable GPU kernel optimization skills distilled from the trajectory.",
      "parameters": {
        "type": "object",
        "properties": {
          "think": {"type": "string", "description": "short reasoning"},
          "new_skills": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "name": {"type": "string", "description": "snake_case"},
                "description": {"type": "string"},
                "scope": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "content": {"type": "string", "description": "## Motivation, ## Key Idea, ## Example"}
              },
              "required": ["name", "description", "scope", "tags", "content"]
            }
          }
        },
        "required": ["think", "new_skills"]
      }
    }
  })");
}

namespace {

std::string trajectory_text(const Rollout& r, size_t max_code_chars) {
  std::string out;
  for (const PolicyTurn& t : r.turns) {
    out += fmt::format("### Turn {}: {}\n", t.turn + 1, t.result ? outcome_line(*t.result) : "no usable answer");
    if (!t.strategy.empty()) out += "Strategy: " + t.strategy + "\n";
    if (!t.code.empty()) {
      const bool cut = t.code.size() > max_code_chars;
      out += "```python\n" + (cut ? t.code.substr(0, max_code_chars) + "\n# [... cut]" : t.code) + "\n```\n";
    }
    out += "\n";
  }
  return out;
}

std::string string_field(const ordered_json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

SkillProposal proposal_from(const ordered_json& item, const PolicyTask& task, const std::string& model) {
  SkillProposal p;
  if (!item.is_object()) {
    p.refused = "not a JSON object: " + item.dump().substr(0, 200);
    return p;
  }
  skills::Skill& s = p.skill;
  s.name = string_field(item, "name");
  s.description = string_field(item, "description");
  s.scope = string_field(item, "scope");
  s.content = string_field(item, "content");
  if (item.contains("tags") && item["tags"].is_array())
    for (const auto& t : item["tags"])
      if (t.is_string()) s.tags.push_back(t.get<std::string>());
  s.backends = {s.content.find("triton") != std::string::npos ? "triton" : "cuda"};
  s.provenance.task = task.task.id;
  s.provenance.model = model;
  try {
    skills::validate(s);
  } catch (const skills::SkillError& e) {
    p.refused = fmt::format("field '{}': {}", e.field(), e.what());
    return p;
  }
  if (auto why = screen_skill(s, task.source, task.task.name)) p.refused = *why;
  return p;
}

}  // namespace

std::vector<SummaryOutcome> summarize(llm::Backbone& backbone, const Prompts& prompts, const PolicyTask& task,
                                      const std::vector<const Rollout*>& rollouts, const SummarySettings& settings) {
  std::vector<SummaryOutcome> out;
  if (rollouts.empty()) return out;
  std::vector<llm::GenerationRequest> requests;
  for (const Rollout* r : rollouts) {
    llm::GenerationRequest q;
    q.messages = {
        {"system", prompts.render("summary_system", {})},
        {"user", prompts.render("summary_user", {{"task_id", task.task.id},
                                                 {"task_source", task.source},
                                                 {"trajectory", trajectory_text(*r, settings.max_code_chars)}})}};
    q.chat_extra["tools"] = ordered_json::array({update_skill_library_tool()});
    q.sampling = settings.sampling;
    q.sampling.seed = turn_seed(settings.seed, r->scheme, r->sample, -1);
    requests.push_back(std::move(q));
  }
  const auto results = backbone.generate(requests);
  for (size_t i = 0; i < rollouts.size(); ++i) {
    SummaryOutcome o;
    o.rollout = rollouts[i];
    o.call = record_call(Role::summary, requests[i], results[i]);
    o.call.scheme = rollouts[i]->scheme;
    o.call.sample = rollouts[i]->sample;
    if (!results[i].error) {
      const auto parsed = extract_tool_call(results[i].reasoning + "\n" + results[i].text, results[i].tool_calls,
                                            "update_skill_library", {"new_skills"});
      if (!parsed.call) {
        o.call.parse_failure = parse_failure_name(parsed.failure);
      } else if (!parsed.call->arguments["new_skills"].is_array()) {
        o.call.parse_failure = parse_failure_name(ParseFailure::bad_tool_call);
      } else {
        size_t passed = 0;
        for (const auto& item : parsed.call->arguments["new_skills"]) {
          SkillProposal p = proposal_from(item, task, backbone.model_name());
          if (p.refused.empty() && ++passed > settings.max_skills)
            p.refused = fmt::format("over the limit of {} skills per summary", settings.max_skills);
          o.proposals.push_back(std::move(p));
        }
      }
    }
    SummaryInputs inputs;
    for (const auto& p : o.proposals) (p.refused.empty() ? inputs.proposed : inputs.refused).push_back(p.skill.name);
    o.call.reward_inputs = std::move(inputs);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace vinci::agents
