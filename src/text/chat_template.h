// Chat templates as transformers' apply_chat_template applies them, byte for byte.
//
// Chat templates as transformers' apply_chat_template applies them: the model's Jinja template,
// rendered over OpenAI-format messages with the same preprocessing (null fields dropped,
// reasoning fields aliased) and the same variables (special tokens, tools, documents,
// add_generation_prompt, extra keyword arguments), so prompts are byte-identical to Python's.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "text/jinja.h"

namespace vinci::text {

// Names the template's origin and, where another template is the remedy, suggests
// --chat-template FILE.
class ChatTemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A special token as tokenizer_config.json writes it: a string, or an AddedToken object with a
// "content" string; "" when the key is absent or null. Throws ChatTemplateError naming the file
// and key for any other form.
std::string special_token(const nlohmann::ordered_json& config, const char* key, const std::filesystem::path& file);

struct ChatOptions {
  bool add_generation_prompt = false;
  // The template's extra variables (enable_thinking, date_string, ...); "tools" and "documents"
  // are apply_chat_template's arguments of those names. Ordered, because tojson writes a tool
  // schema's keys in the order the caller gave them, as Python's dicts do.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

class ChatTemplate {
 public:
  // The template comes from chat_template.jinja (plus additional_chat_templates/*.jinja), else
  // from tokenizer_config.json's "chat_template" (a string, or a list of {name, template}), or
  // from `template_file` when given (the --chat-template override). bos_token and eos_token come
  // from tokenizer_config.json (a string, or an object with "content").
  static ChatTemplate from_model_dir(const std::filesystem::path& dir, const std::filesystem::path& template_file = {});
  // An empty token is not set: the template sees it as undefined, as when the tokenizer has none.
  static ChatTemplate from_file(const std::filesystem::path& jinja, std::string bos_token = "",
                                std::string eos_token = "");
  static ChatTemplate from_string(const std::string& source, std::string origin, std::string bos_token = "",
                                  std::string eos_token = "");

  // messages: a non-empty array of message objects. Uses the "tool_use" template when tools
  // are given and the model has one, else "default". Safe to call concurrently.
  std::string render(const nlohmann::ordered_json& messages, const ChatOptions& options = {}) const;

  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }

 private:
  struct Source {
    std::string origin;  // the file it came from, for error messages
    jinja::Template parsed;
  };
  ChatTemplate() = default;
  void add(const std::string& name, const std::string& source, const std::string& origin);

  std::map<std::string, Source> templates_;
  std::string bos_token_, eos_token_;
};

}  // namespace vinci::text
