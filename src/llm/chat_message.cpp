#include "llm/chat_message.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::llm {

using nlohmann::ordered_json;

ordered_json to_json(const std::vector<ChatMessage>& messages) {
  ordered_json out = ordered_json::array();
  for (const auto& m : messages) out.push_back({{"role", m.role}, {"content", m.content}});
  return out;
}

std::vector<ChatMessage> chat_messages_from_json(const ordered_json& messages, std::string_view where) {
  if (!messages.is_array()) throw std::invalid_argument(fmt::format("{}: messages must be an array", where));
  std::vector<ChatMessage> out;
  out.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const auto bad = [&](std::string_view what) {
      return std::invalid_argument(fmt::format("{}: messages[{}]: {}", where, i, what));
    };
    if (!m.is_object()) throw bad("not an object");
    for (const auto& [key, value] : m.items())
      if (key != "role" && key != "content")
        throw bad(fmt::format("field '{}' is not kept (role and content only)", key));
    const auto role = m.find("role");
    const auto content = m.find("content");
    if (role == m.end() || !role->is_string()) throw bad("'role' must be a string");
    if (content == m.end() || !content->is_string()) throw bad("'content' must be a string");
    out.push_back({role->get<std::string>(), content->get<std::string>()});
  }
  return out;
}

}  // namespace vinci::llm
