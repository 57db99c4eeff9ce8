#include "text/chat_template.h"

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::text {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRemedy = "; give vinci a template it can render with --chat-template FILE";

std::string describe(const jinja::Error& e) { return e.unsupported() ? e.what() + std::string(kRemedy) : e.what(); }

nlohmann::ordered_json read_json(const fs::path& file) {
  try {
    return nlohmann::ordered_json::parse(core::read_file(file));
  } catch (const nlohmann::json::parse_error& e) {
    throw ChatTemplateError(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
}

// apply_chat_template drops the fields whose value is None, then (render_jinja_template)
// copies the reasoning under "thinking" and "reasoning_content", the names templates read.
nlohmann::ordered_json prepare_message(const nlohmann::ordered_json& message, size_t index) {
  if (!message.is_object())
    throw ChatTemplateError(fmt::format("chat message {} must be a JSON object, not {}", index, message.type_name()));
  nlohmann::ordered_json m = nlohmann::ordered_json::object();
  for (const auto& [key, value] : message.items())
    if (!value.is_null()) m[key] = value;
  for (const char* field : {"reasoning_content", "thinking", "reasoning"}) {
    if (!m.contains(field)) continue;
    nlohmann::ordered_json reasoning = m[field];
    nlohmann::ordered_json aliased = nlohmann::ordered_json::object();
    aliased["thinking"] = reasoning;
    for (const auto& [key, value] : m.items()) aliased[key] = value;
    aliased["reasoning_content"] = reasoning;
    return aliased;
  }
  return m;
}

}  // namespace

std::string special_token(const nlohmann::ordered_json& config, const char* key, const fs::path& file) {
  if (!config.contains(key) || config[key].is_null()) return "";
  const auto& token = config[key];
  if (token.is_string()) return token.get<std::string>();
  if (token.is_object() && token.contains("content") && token["content"].is_string())
    return token["content"].get<std::string>();
  throw ChatTemplateError(
      fmt::format("{}: \"{}\" must be a string or an object with a \"content\" string", file.string(), key));
}

void ChatTemplate::add(const std::string& name, const std::string& source, const std::string& origin) {
  try {
    templates_.insert_or_assign(name, Source{origin, jinja::Template::parse(source)});
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(fmt::format("chat template {}: {}{}", origin, e.what(), kRemedy));
  }
}

ChatTemplate ChatTemplate::from_string(const std::string& source, std::string origin, std::string bos_token,
                                       std::string eos_token) {
  ChatTemplate t;
  t.bos_token_ = std::move(bos_token);
  t.eos_token_ = std::move(eos_token);
  t.add("default", source, origin);
  return t;
}

ChatTemplate ChatTemplate::from_file(const fs::path& jinja, std::string bos_token, std::string eos_token) {
  auto source = core::try_read_file(jinja);
  if (!source) throw ChatTemplateError(fmt::format("cannot read the chat template {}", jinja.string()));
  return from_string(*source, jinja.string(), std::move(bos_token), std::move(eos_token));
}

ChatTemplate ChatTemplate::from_model_dir(const fs::path& dir, const fs::path& template_file) {
  if (!fs::is_directory(dir)) throw ChatTemplateError(fmt::format("model directory {} does not exist", dir.string()));
  const fs::path config_file = dir / "tokenizer_config.json";
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (fs::exists(config_file)) config = read_json(config_file);
  std::string bos = special_token(config, "bos_token", config_file);
  std::string eos = special_token(config, "eos_token", config_file);
  if (!template_file.empty()) return from_file(template_file, std::move(bos), std::move(eos));

  ChatTemplate t;
  t.bos_token_ = std::move(bos);
  t.eos_token_ = std::move(eos);
  // As in transformers, separate template files take priority over tokenizer_config.json.
  const fs::path jinja_file = dir / "chat_template.jinja";
  const fs::path extra_dir = dir / "additional_chat_templates";
  if (fs::exists(jinja_file)) t.add("default", core::read_file(jinja_file), jinja_file.string());
  if (fs::is_directory(extra_dir))
    for (const auto& entry : fs::directory_iterator(extra_dir))
      if (entry.path().extension() == ".jinja")
        t.add(entry.path().stem().string(), core::read_file(entry.path()), entry.path().string());
  if (!t.templates_.empty()) return t;

  const std::string origin = config_file.string() + " [chat_template]";
  const auto found = config.find("chat_template");
  if (found == config.end() || found->is_null())
    throw ChatTemplateError(fmt::format(
        "{} has no chat template: no chat_template.jinja, and tokenizer_config.json has no \"chat_template\"{}",
        dir.string(), kRemedy));
  if (found->is_string()) {
    t.add("default", found->get<std::string>(), origin);
  } else if (found->is_array()) {
    for (const auto& entry : *found) {
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") || !entry["name"].is_string() ||
          !entry["template"].is_string())
        throw ChatTemplateError(
            fmt::format("{}: each \"chat_template\" entry must be {{\"name\": string, \"template\": string}}",
                        config_file.string()));
      std::string name = entry["name"].get<std::string>();
      t.add(name, entry["template"].get<std::string>(), fmt::format("{} '{}'", origin, name));
    }
  } else {
    throw ChatTemplateError(
        fmt::format("{}: \"chat_template\" must be a string or a list of {{name, template}}", config_file.string()));
  }
  return t;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const ChatOptions& options) const {
  if (!messages.is_array()) throw ChatTemplateError("chat messages must be a JSON array of message objects");
  if (messages.empty()) throw ChatTemplateError("cannot apply a chat template to an empty conversation");
  if (!options.extra.is_object()) throw ChatTemplateError("the extra chat template variables must be a JSON object");
  for (const char* reserved : {"messages", "add_generation_prompt"})
    if (options.extra.contains(reserved))
      throw ChatTemplateError(
          fmt::format("\"{}\" cannot be an extra template variable; it is set by the caller", reserved));

  // Special tokens first, then the caller's variables over them, as in apply_chat_template.
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  if (!bos_token_.empty()) variables["bos_token"] = bos_token_;
  if (!eos_token_.empty()) variables["eos_token"] = eos_token_;
  for (const auto& [key, value] : options.extra.items()) variables[key] = value;
  nlohmann::ordered_json chat = nlohmann::ordered_json::array();
  for (size_t i = 0; i < messages.size(); ++i) chat.push_back(prepare_message(messages[i], i));
  variables["messages"] = std::move(chat);
  if (!variables.contains("tools")) variables["tools"] = nullptr;
  if (!variables.contains("documents")) variables["documents"] = nullptr;
  variables["add_generation_prompt"] = options.add_generation_prompt;

  std::string name = "default";
  if (!variables["tools"].is_null() && templates_.count("tool_use")) name = "tool_use";
  auto it = templates_.find(name);
  if (it == templates_.end()) {
    std::string names;
    for (const auto& [n, source] : templates_)
      names += fmt::format("{}'{}' ({})", names.empty() ? "" : ", ", n, source.origin);
    throw ChatTemplateError(
        fmt::format("the model has several chat templates, {}, and none is named 'default'{}", names, kRemedy));
  }
  try {
    return it->second.parsed.render(variables);
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(fmt::format("chat template {}: {}", it->second.origin, describe(e)));
  }
}

}  // namespace vinci::text
