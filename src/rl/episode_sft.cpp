#include "rl/episode_sft.h"

#include <cctype>
#include <string>

#include "agents/selection_agent.h"
#include "agents/summary_agent.h"

namespace vinci::rl {

using nlohmann::ordered_json;

namespace {

// "level2/3_ReluScale" -> 2; a task id without a level prefix counts as level 0.
int level_of(const std::string& task) {
  if (!task.starts_with("level")) return 0;
  int level = 0;
  for (size_t i = 5; i < task.size() && std::isdigit(static_cast<unsigned char>(task[i])); ++i)
    level = level * 10 + (task[i] - '0');
  return level;
}

bool kept(const agents::AgentCall& c) {
  if (!c.parse_failure.empty() || c.response_text.empty()) return false;
  if (c.role == agents::Role::policy || c.role == agents::Role::verify) return c.result && c.result->correct();
  return true;
}

ordered_json record_of(const std::string& task, const std::string& role, ordered_json messages,
                       const std::string& answer) {
  messages.push_back({{"role", "assistant"}, {"content", answer}});
  ordered_json record = {{"messages", std::move(messages)}};
  if (role == "selection") record["tools"] = ordered_json::array({agents::select_skills_tool()});
  if (role == "summary") record["tools"] = ordered_json::array({agents::update_skill_library_tool()});
  record["meta"] = {{"task", task}, {"level", level_of(task)}, {"role", role}};
  return record;
}

}  // namespace

std::vector<ordered_json> sft_records(const agents::Episode& episode) {
  std::vector<ordered_json> out;
  for (const auto& call : episode.calls) {
    if (!kept(call)) continue;
    const bool policy = call.role == agents::Role::policy || call.role == agents::Role::verify;
    out.push_back(record_of(episode.task, policy ? "policy" : std::string(agents::to_string(call.role)),
                            llm::to_json(call.messages), call.response_text));
  }
  return out;
}

ordered_json policy_record(const std::string& task, ordered_json messages, const std::string& answer) {
  return record_of(task, "policy", std::move(messages), answer);
}

}  // namespace vinci::rl
