// Chat templates against transformers' apply_chat_template: every rendering in chat_golden.json
// (tests/fixtures/llm/make_chat_fixtures.py, official Qwen2.5, Qwen3 and Llama-3.1 templates)
// must match byte for byte; plus loading from a model directory and the errors.
#include "text/chat_template.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/files.h"
#include "support/temp_dir.h"
#include "text/tokenizer.h"

namespace vinci::text {
namespace chat_template_test {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";

const ordered_json& golden() {
  static const ordered_json cases = ordered_json::parse(core::read_file(kFixtures / "chat_golden.json"))["cases"];
  return cases;
}

ChatOptions options_of(const ordered_json& c) {
  ChatOptions options;
  options.add_generation_prompt = c["add_generation_prompt"].get<bool>();
  options.extra = c["extra"];
  return options;
}

std::string template_text(const std::string& name) {
  return core::read_file(kFixtures / "templates" / (name + ".jinja"));
}

TEST(ChatTemplate, GoldenRenderingsMatchTransformers) {
  ASSERT_GE(golden().size(), 40u);
  size_t checked = 0;
  for (size_t i = 0; i < golden().size(); ++i) {
    const auto& c = golden()[i];
    const std::string name = c["template"].get<std::string>();
    SCOPED_TRACE(fmt::format("case {} ({}): {}", i, name, c["messages"].dump()));
    auto chat = ChatTemplate::from_file(kFixtures / "templates" / (name + ".jinja"), c["bos_token"].get<std::string>(),
                                        c["eos_token"].get<std::string>());
    EXPECT_EQ(chat.render(c["messages"], options_of(c)), c["text"].get<std::string>());
    ++checked;
  }
  EXPECT_EQ(checked, golden().size());
}

// apply_chat_template(tokenize=True) encodes the rendering without adding special tokens: the
// template writes them itself. Equal ids here is what the policy's prompt tokens rest on.
TEST(ChatTemplate, RenderedChatsEncodeToTransformersIds) {
  std::map<std::string, Tokenizer> tokenizers;
  for (size_t i = 0; i < golden().size(); ++i) {
    const auto& c = golden()[i];
    const std::string name = c["template"].get<std::string>();
    SCOPED_TRACE(fmt::format("case {} ({})", i, name));
    const std::string tokenizer = c["tokenizer"].get<std::string>();
    if (!tokenizers.contains(tokenizer))
      tokenizers.emplace(tokenizer, Tokenizer::from_file(kFixtures / tokenizer / "tokenizer.json"));
    auto chat = ChatTemplate::from_file(kFixtures / "templates" / (name + ".jinja"), c["bos_token"].get<std::string>(),
                                        c["eos_token"].get<std::string>());
    const std::string text = chat.render(c["messages"], options_of(c));
    EXPECT_EQ(tokenizers.at(tokenizer).encode(text, false), c["ids"].get<std::vector<int32_t>>());
  }
}

TEST(ChatTemplate, GoldenCoversEveryTemplate) {
  std::map<std::string, int> per_template;
  for (const auto& c : golden()) ++per_template[c["template"].get<std::string>()];
  EXPECT_GE(per_template["qwen2_5"], 10);
  EXPECT_GE(per_template["qwen3"], 20);
  EXPECT_GE(per_template["llama3"], 10);
}

const ordered_json& first_case(const std::string& name, bool with_tools = false) {
  for (const auto& c : golden())
    if (c["template"] == name && c["extra"].contains("tools") == with_tools) return c;
  throw std::runtime_error("no golden case for " + name);
}

TEST(ChatTemplate, LoadsFromTokenizerConfig) {
  const vinci::test::TempDir dir("chat");
  const auto& c = first_case("llama3");
  ordered_json config = {{"bos_token", {{"__type", "AddedToken"}, {"content", "<|begin_of_text|>"}, {"lstrip", false}}},
                         {"eos_token", "<|eot_id|>"},
                         {"chat_template", template_text("llama3")}};
  core::write_file_atomic(dir.path() / "tokenizer_config.json", config.dump(2));
  auto chat = ChatTemplate::from_model_dir(dir.path());
  EXPECT_EQ(chat.bos_token(), "<|begin_of_text|>");
  EXPECT_EQ(chat.eos_token(), "<|eot_id|>");
  EXPECT_EQ(chat.render(c["messages"], options_of(c)), c["text"].get<std::string>());
}

TEST(ChatTemplate, ChatTemplateJinjaTakesPriorityOverTokenizerConfig) {
  const vinci::test::TempDir dir("chat");
  const auto& c = first_case("qwen3");
  ordered_json config = {{"bos_token", nullptr}, {"eos_token", "<|im_end|>"}, {"chat_template", "{{ 'stale' }}"}};
  core::write_file_atomic(dir.path() / "tokenizer_config.json", config.dump());
  core::write_file_atomic(dir.path() / "chat_template.jinja", template_text("qwen3"));
  auto chat = ChatTemplate::from_model_dir(dir.path());
  EXPECT_EQ(chat.bos_token(), "");
  EXPECT_EQ(chat.render(c["messages"], options_of(c)), c["text"].get<std::string>());
}

TEST(ChatTemplate, NamedTemplatesPickToolUseWhenToolsAreGiven) {
  const vinci::test::TempDir dir("chat");
  ordered_json config = {{"chat_template",
                          {{{"name", "default"}, {"template", template_text("qwen2_5")}},
                           {{"name", "tool_use"}, {"template", "tools: {{ tools | length }}"}}}}};
  core::write_file_atomic(dir.path() / "tokenizer_config.json", config.dump());
  auto chat = ChatTemplate::from_model_dir(dir.path());
  const auto& plain = first_case("qwen2_5");
  EXPECT_EQ(chat.render(plain["messages"], options_of(plain)), plain["text"].get<std::string>());
  const auto& with_tools = first_case("qwen2_5", true);
  EXPECT_EQ(chat.render(with_tools["messages"], options_of(with_tools)), "tools: 2");
}

TEST(ChatTemplate, OverrideFileKeepsTheModelsSpecialTokens) {
  const vinci::test::TempDir dir("chat");
  core::write_file_atomic(dir.path() / "tokenizer_config.json",
                          R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})");
  core::write_file_atomic(dir.path() / "mine.jinja", "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}");
  auto chat = ChatTemplate::from_model_dir(dir.path(), dir.path() / "mine.jinja");
  EXPECT_EQ(chat.render(ordered_json::parse(R"([{"role": "user", "content": "hi"}])")),
            "<|begin_of_text|>hi<|eot_id|>");
}

// apply_chat_template drops None fields and mirrors reasoning under "thinking" and
// "reasoning_content"; tools and documents are always defined (None when not given).
TEST(ChatTemplate, PreparesMessagesAsTransformersDoes) {
  auto chat = ChatTemplate::from_string(
      "{% for m in messages %}{{ m.content is defined }} {{ m | tojson }};{% endfor %}"
      "{{ tools is none }} {{ documents is none }} {{ bos_token is defined }} {{ add_generation_prompt }}",
      "inline");
  auto messages = ordered_json::parse(
      R"([{"role": "user", "content": null}, {"role": "assistant", "content": "a", "reasoning": "r", "tool_calls": null}])");
  EXPECT_EQ(chat.render(messages, {.add_generation_prompt = true}),
            R"(False {"role": "user"};True {"thinking": "r", "role": "assistant", "content": "a", "reasoning": "r", )"
            R"("reasoning_content": "r"};True True False True)");
}

TEST(ChatTemplate, NoTemplateInTheModelDirectory) {
  const vinci::test::TempDir dir("chat");
  core::write_file_atomic(dir.path() / "tokenizer_config.json", R"({"eos_token": "</s>"})");
  try {
    ChatTemplate::from_model_dir(dir.path());
    FAIL() << "loaded a template that does not exist";
  } catch (const ChatTemplateError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--chat-template FILE"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, UnsupportedConstructNamesFileLineAndConstruct) {
  const vinci::test::TempDir dir("chat");
  core::write_file_atomic(
      dir.path() / "chat_template.jinja",
      "{%- for m in messages %}\n{%- macro render(m) %}{{ m.content }}{% endmacro %}\n{%- endfor %}");
  try {
    ChatTemplate::from_model_dir(dir.path());
    FAIL() << "parsed a template with a macro";
  } catch (const ChatTemplateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir.path() / "chat_template.jinja").string()), std::string::npos) << what;
    EXPECT_NE(what.find("line 2"), std::string::npos) << what;
    EXPECT_NE(what.find("{% macro %}"), std::string::npos) << what;
    EXPECT_NE(what.find("--chat-template FILE"), std::string::npos) << what;
  }
}

TEST(ChatTemplate, TemplateErrorsAtRenderNameTheTemplate) {
  auto chat = ChatTemplate::from_file(kFixtures / "templates" / "llama3.jinja", "<|begin_of_text|>", "<|eot_id|>");
  auto two_calls = ordered_json::parse(R"([{"role": "user", "content": "x"},
      {"role": "assistant", "tool_calls": [{"function": {"name": "a", "arguments": {}}},
                                            {"function": {"name": "b", "arguments": {}}}]}])");
  try {
    chat.render(two_calls);
    FAIL() << "rendered two tool calls, which the Llama-3.1 template refuses";
  } catch (const ChatTemplateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("llama3.jinja: line "), std::string::npos) << what;
    EXPECT_NE(what.find("This model only supports single tool-calls at once!"), std::string::npos) << what;
  }
  EXPECT_THROW(chat.render(ordered_json::array()), ChatTemplateError);
  EXPECT_THROW(chat.render(ordered_json::parse(R"(["not an object"])")), ChatTemplateError);
}

}  // namespace chat_template_test
}  // namespace vinci::text
