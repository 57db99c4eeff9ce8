// One message of a chat prompt as the agents send it: a role and its text. The agents' prompts
// hold nothing else, so the episode record keeps them typed; the OpenAI form (JSON, which chat
// templates read) exists only at the backbone's edge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::llm {

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

nlohmann::ordered_json to_json(const std::vector<ChatMessage>& messages);

// Reads OpenAI-format messages; throws std::invalid_argument naming `where`, the message index and
// the field when a message is not an object with a string role and a string content, or carries
// anything else (tool calls, content parts), which this form cannot keep.
std::vector<ChatMessage> chat_messages_from_json(const nlohmann::ordered_json& messages, std::string_view where);

}  // namespace vinci::llm
