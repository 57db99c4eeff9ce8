// Reading what real models write: the kernel of a policy answer, a selection or summary tool call.
//
// Reading what real models write: the kernel in a policy answer, and a tool call in a selection or
// summary answer, wherever the model put it. A failure is classified and comes with the feedback the
// next turn shows the model, so a malformed answer costs a turn, never the run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::agents {

enum class ParseFailure {
  none,
  empty,              // nothing but whitespace (or reasoning only)
  too_long,           // past the size limit: not looked at
  no_code,            // no code block and no bare ModelNew source
  unterminated_code,  // the block defining ModelNew never closes: the answer was cut off
  no_model_new,       // code, but no block defines class ModelNew
  no_tool_call,       // no call to the expected tool anywhere
  bad_tool_call,      // a call whose arguments are not a JSON object with the required keys
};
const char* parse_failure_name(ParseFailure failure);

struct CodeExtraction {
  std::optional<std::string> code;  // the candidate file's text
  ParseFailure failure = ParseFailure::none;
  std::string feedback;  // for the next turn, when it failed
};

// Only code outside <think>...</think> counts when there is any: reasoning holds drafts. Of several
// blocks defining ModelNew, the last one is the answer.
CodeExtraction extract_kernel_code(std::string_view response, size_t max_chars = 400'000);

struct ToolCall {
  std::string name;
  nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
};

struct ToolCallExtraction {
  std::optional<ToolCall> call;
  ParseFailure failure = ParseFailure::none;
  std::string feedback;
};

// Looks for a call to `tool`, in this order: the server's parsed tool calls (OpenAI format), then
// the text, reasoning included: <tool_call>{"name", "arguments"}</tool_call> tags, then JSON objects
// (fenced or bare) that are either {"name": tool, "arguments": {...}} or the arguments themselves
// (recognised by holding every required key). The last candidate in the text wins.
ToolCallExtraction extract_tool_call(std::string_view text, const nlohmann::ordered_json& server_tool_calls,
                                     std::string_view tool, const std::vector<std::string>& required_keys);

// The text with every <think>...</think> span removed (an unclosed one runs to the end).
std::string strip_reasoning(std::string_view text);

}  // namespace vinci::agents
