// The SFT cold start's data: JSONL conversations in OpenAI's message format.
//
// The SFT cold start's data: JSONL conversations in OpenAI's message format (tool calls included),
// one per line, for all three agent roles:
//   {"messages": [...], "tools": [...]?, "meta": {"task": "level1/4_Softmax", "level": 1,
//    "role": "policy" | "selection" | "summary", "skills": ["name", ...]?}}
// The last message must be the assistant's: it is what the model learns to say.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::rl {

struct SftConversation {
  size_t line = 0;  // 1-based line of its file
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;  // null when the line has none
  std::string task, role;
  int level = 0;
  std::vector<std::string> skills;
  // What near-duplicate detection compares: the kernel file of a policy answer, else the final
  // answer's text and tool calls.
  std::string solution;
};

// Throws std::runtime_error "<file>:<line>: <field>: <what is wrong>" for the first bad line, so
// nothing is trained on a file that was only half understood.
std::vector<SftConversation> load_sft_conversations(const std::filesystem::path& path);

// The same, for one line (line numbers for messages only).
SftConversation parse_sft_conversation(const nlohmann::ordered_json& j, size_t line);

}  // namespace vinci::rl
