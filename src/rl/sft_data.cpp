#include "rl/sft_data.h"

#include <stdexcept>

#include <fmt/format.h>

#include "agents/output_parser.h"
#include "core/files.h"

namespace vinci::rl {

namespace {

using nlohmann::ordered_json;

struct LineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& field, const std::string& what) { throw LineError(field + ": " + what); }

std::string string_field(const ordered_json& meta, const char* key) {
  const auto it = meta.find(key);
  if (it == meta.end() || !it->is_string() || it->get<std::string>().empty())
    bad(fmt::format("meta.{}", key), "a non-empty string is required");
  return it->get<std::string>();
}

}  // namespace

SftConversation parse_sft_conversation(const ordered_json& j, size_t line) {
  SftConversation c;
  c.line = line;
  if (!j.is_object()) bad("(line)", "a JSON object with 'messages' and 'meta' is required");
  if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
    bad("messages", "a non-empty array of OpenAI messages is required");
  c.messages = j["messages"];
  for (size_t i = 0; i < c.messages.size(); ++i) {
    const auto& m = c.messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad(fmt::format("messages[{}]", i), "an object with a string 'role' is required");
  }
  const auto& last = c.messages.back();
  if (last["role"] != "assistant")
    bad(fmt::format("messages[{}].role", c.messages.size() - 1),
        "the last message must be the assistant's (what is trained)");
  c.tools = j.contains("tools") ? j["tools"] : ordered_json(nullptr);
  if (!c.tools.is_null() && !c.tools.is_array()) bad("tools", "an array of tool schemas is required when present");

  if (!j.contains("meta") || !j["meta"].is_object()) bad("meta", "an object with task, level and role is required");
  const auto& meta = j["meta"];
  c.task = string_field(meta, "task");
  c.role = string_field(meta, "role");
  if (c.role != "policy" && c.role != "selection" && c.role != "summary")
    bad("meta.role", fmt::format("'{}' is not one of policy, selection, summary", c.role));
  if (!meta.contains("level") || !meta["level"].is_number_integer()) bad("meta.level", "an integer is required");
  c.level = meta["level"].get<int>();
  if (meta.contains("skills")) {
    if (!meta["skills"].is_array()) bad("meta.skills", "an array of skill names is required when present");
    for (const auto& s : meta["skills"]) {
      if (!s.is_string()) bad("meta.skills", fmt::format("{} is not a skill name", s.dump()));
      c.skills.push_back(s.get<std::string>());
    }
  }

  const std::string content =
      last.contains("content") && last["content"].is_string() ? last["content"].get<std::string>() : "";
  if (c.role == "policy") {
    const auto code = agents::extract_kernel_code(content);
    if (!code.code)
      bad(fmt::format("messages[{}].content", c.messages.size() - 1),
          fmt::format("a policy answer must hold the ModelNew file ({})", agents::parse_failure_name(code.failure)));
    c.solution = *code.code;
  } else {
    c.solution = content;
    if (last.contains("tool_calls")) c.solution += "\n" + last["tool_calls"].dump();
  }
  return c;
}

std::vector<SftConversation> load_sft_conversations(const std::filesystem::path& path) {
  std::vector<SftConversation> out;
  for (const auto& [line, text] : core::read_jsonl_lines(path)) {
    try {
      out.push_back(parse_sft_conversation(ordered_json::parse(text), line));
    } catch (const ordered_json::parse_error& e) {
      throw std::runtime_error(fmt::format("{}:{}: not JSON: {}", path.string(), line, e.what()));
    } catch (const LineError& e) {
      throw std::runtime_error(fmt::format("{}:{}: {}", path.string(), line, e.what()));
    }
  }
  return out;
}

}  // namespace vinci::rl
