#include "agents/selection_agent.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/output_parser.h"
#include "core/files.h"

namespace vinci::agents {

using nlohmann::ordered_json;

ordered_json select_skills_tool() {
  return ordered_json::parse(R"({
    "type": "function",
    "function": {
      "name": "select_skills",
      "description": "Choose at most 3 skills from the list for this task.",
      "parameters": {
        "type": "object",
        "properties": {
          "think": {"type": "string", "description": "short reasoning"},
          "selected_skills": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {"name": {"type": "string"}, "reason": {"type": "string"}},
              "required": ["name", "reason"]
            }
          }
        },
        "required": ["think", "selected_skills"]
      }
    }
  })");
}

namespace {

std::string header_list(const std::vector<skills::SearchHit>& hits) {
  std::string out;
  for (size_t i = 0; i < hits.size(); ++i) {
    const skills::Skill& s = *hits[i].skill;
    out += fmt::format("{}. {}\n   scope: {}\n   tags: {}\n   {}\n", i + 1, s.name, s.scope, fmt::join(s.tags, ", "),
                       s.description);
  }
  return out;
}

// A scheme from the model's select_skills arguments: known names only, no repeats, at most max.
void fill_scheme(SkillScheme& scheme, const ordered_json& args, const std::vector<std::string>& shown,
                 size_t max_skills) {
  const ordered_json& picks = args["selected_skills"];
  if (!picks.is_array()) {
    scheme.dropped.push_back("selected_skills is not a list");
    return;
  }
  for (const auto& p : picks) {
    std::string name, reason;
    if (p.is_string()) {
      name = p.get<std::string>();
    } else if (p.is_object() && p.contains("name") && p["name"].is_string()) {
      name = p["name"].get<std::string>();
      if (p.contains("reason") && p["reason"].is_string()) reason = p["reason"].get<std::string>();
    } else {
      scheme.dropped.push_back(fmt::format("{} (not a skill name)", p.dump()));
      continue;
    }
    if (std::find(shown.begin(), shown.end(), name) == shown.end()) {
      scheme.dropped.push_back(fmt::format("{} (not in the list)", name));
    } else if (std::find(scheme.skills.begin(), scheme.skills.end(), name) != scheme.skills.end()) {
      scheme.dropped.push_back(fmt::format("{} (chosen twice)", name));
    } else if (scheme.skills.size() >= max_skills) {
      scheme.dropped.push_back(fmt::format("{} (over the limit of {})", name, max_skills));
    } else {
      scheme.skills.push_back(name);
      scheme.reasons.push_back(reason);
    }
  }
}

}  // namespace

SelectionOutcome select_skills(llm::Backbone& backbone, const Prompts& prompts, const skills::Library& library,
                               const eval::Task& task, const SelectionSettings& settings,
                               const skills::SearchFilter& filter) {
  SelectionOutcome out;
  const std::string source = core::read_file(task.file);
  const auto hits = library.search(source, settings.top_n, filter);
  for (const auto& h : hits) out.shown.push_back(h.skill->name);

  if (!hits.empty() && settings.schemes > 0) {
    llm::GenerationRequest request;
    request.messages = {{"system", prompts.render("selection_system", {})},
                        {"user", prompts.render("selection_user", {{"task_id", task.id},
                                                                   {"task_source", source},
                                                                   {"skill_count", std::to_string(hits.size())},
                                                                   {"skill_headers", header_list(hits)}})}};
    request.chat_extra["tools"] = ordered_json::array({select_skills_tool()});
    request.sampling = settings.sampling;
    std::vector<llm::GenerationRequest> requests(settings.schemes, request);
    for (int i = 0; i < settings.schemes; ++i) requests[i].sampling.seed = settings.seed + static_cast<uint64_t>(i);
    const auto results = backbone.generate(requests);

    for (int i = 0; i < settings.schemes; ++i) {
      const llm::GenerationResult& r = results[i];
      AgentCall call = record_call(Role::selection, requests[i], r);
      call.scheme = i;
      SkillScheme scheme;
      scheme.index = i;
      if (!r.error) {
        const auto parsed =
            extract_tool_call(r.reasoning + "\n" + r.text, r.tool_calls, "select_skills", {"selected_skills"});
        if (parsed.call)
          fill_scheme(scheme, parsed.call->arguments, out.shown, settings.max_skills);
        else
          call.parse_failure = parse_failure_name(parsed.failure);
      }
      call.reward_inputs = SelectionInputs{scheme.skills, scheme.dropped};
      out.calls.push_back(std::move(call));
      out.schemes.push_back(std::move(scheme));
    }
  }
  SkillScheme none;
  none.index = settings.schemes;
  none.null_scheme = true;
  out.schemes.push_back(std::move(none));
  return out;
}

std::vector<skills::Skill> skills_of(const skills::Library& library, const SkillScheme& scheme) {
  std::vector<skills::Skill> out;
  for (const auto& name : scheme.skills)
    if (const skills::Skill* s = library.find(name)) out.push_back(*s);
  return out;
}

}  // namespace vinci::agents
