// The wire format of `vinci serve`: request bodies into generation requests (every refusal names
// its field), and results into vLLM-shaped responses. Prompt ids are checked against transformers'
// apply_chat_template (tests/fixtures/llm/chat_golden.json); the rest against hand-written bodies.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "serve/openai_protocol.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace openai_protocol_test {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using vinci::serve::Endpoint;
using vinci::serve::ParsedRequest;
using vinci::serve::ProtocolError;

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";

struct Served {
  vinci::text::Tokenizer tokenizer = vinci::text::Tokenizer::from_file(kFixtures / "tokenizer/tokenizer.json");
  vinci::text::ChatTemplate chat =
      vinci::text::ChatTemplate::from_file(kFixtures / "templates/qwen2_5.jinja", "", "<|im_end|>");
  vinci::serve::ServedModel model;
  Served() {
    model.name = "tiny";
    model.tokenizer = &tokenizer;
    model.render_chat = [this](const ordered_json& messages, const ordered_json& extra) {
      vinci::text::ChatOptions options;
      options.add_generation_prompt = true;
      options.extra = extra;
      return tokenizer.encode(chat.render(messages, options));
    };
    model.max_model_len = 512;
    model.max_n = 8;
  }
};

Served& served() {
  static Served s;
  return s;
}

ParsedRequest parse(Endpoint endpoint, const ordered_json& body) {
  return vinci::serve::parse_request(endpoint, body.dump(), served().model);
}

// The status and field of the refusal, or "accepted".
std::string refusal(Endpoint endpoint, const std::string& body) {
  try {
    vinci::serve::parse_request(endpoint, body, served().model);
    return "accepted";
  } catch (const ProtocolError& e) {
    return std::to_string(e.status()) + " " + e.param();
  }
}

const ordered_json kMessages = ordered_json::parse(R"([{"role":"user","content":"hi"}])");

TEST(OpenAiProtocol, ChatPromptIsTheTemplatesIdsAsTransformersRendersThem) {
  const auto golden = nlohmann::json::parse(vinci::core::read_file(kFixtures / "chat_golden.json"));
  const auto& c = golden["cases"][0];
  ASSERT_EQ(c["template"], "qwen2_5");
  const ParsedRequest p = parse(
      Endpoint::chat, {{"model", "tiny"}, {"messages", ordered_json::parse(c["messages"].dump())}, {"max_tokens", 8}});
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].prompt_ids, c["ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(p.requests[0].sampling.max_new_tokens, 8);
}

TEST(OpenAiProtocol, TextPartsAreJoinedIntoTheContent) {
  const auto joined = parse(
      Endpoint::chat,
      {{"messages", ordered_json::parse(
                        R"([{"role":"user","content":[{"type":"text","text":"h"},{"type":"text","text":"i"}]}])")}});
  const auto plain = parse(Endpoint::chat, {{"messages", kMessages}});
  EXPECT_EQ(joined.requests[0].prompt_ids, plain.requests[0].prompt_ids);
}

TEST(OpenAiProtocol, SamplingFieldsAndChoices) {
  const auto p = parse(Endpoint::chat, {{"messages", kMessages},
                                        {"n", 3},
                                        {"seed", 40},
                                        {"temperature", 0.7},
                                        {"top_p", 0.9},
                                        {"top_k", -1},
                                        {"stop", "END"},
                                        {"stop_token_ids", {5}},
                                        {"logprobs", true},
                                        {"return_token_ids", true},
                                        {"return_tokens_as_token_ids", true}});
  ASSERT_EQ(p.requests.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const auto& s = p.requests[k].sampling;
    EXPECT_EQ(s.seed, 40u + k);  // choices differ, and each is reproducible
    EXPECT_DOUBLE_EQ(s.temperature, 0.7);
    EXPECT_DOUBLE_EQ(s.top_p, 0.9);
    EXPECT_EQ(s.top_k, 0);
    EXPECT_FALSE(s.greedy);
    EXPECT_EQ(s.stop_strings, std::vector<std::string>{"END"});
    EXPECT_EQ(s.stop_token_ids, std::vector<int32_t>{5});
    // No max_tokens on chat: the rest of the 512-token context.
    EXPECT_EQ(s.max_new_tokens, 512 - static_cast<int>(p.requests[k].prompt_ids.size()));
  }
  EXPECT_TRUE(p.logprobs && p.return_token_ids && p.tokens_as_ids);
  EXPECT_TRUE(parse(Endpoint::chat, {{"messages", kMessages}, {"temperature", 0}}).requests[0].sampling.greedy);
}

TEST(OpenAiProtocol, CompletionsTakeTextIdsOrSeveralPrompts) {
  const auto ids = parse(Endpoint::completions, {{"prompt", {3, 4, 5}}, {"logprobs", 1}});
  ASSERT_EQ(ids.requests.size(), 1u);
  EXPECT_EQ(ids.requests[0].prompt_ids, (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(ids.requests[0].sampling.max_new_tokens, 16);  // OpenAI's and vLLM's default here
  EXPECT_TRUE(ids.logprobs);
  const auto text = parse(Endpoint::completions, {{"prompt", "hello"}});
  EXPECT_EQ(text.requests[0].prompt_ids, served().tokenizer.encode("hello", true));
  const auto several = parse(Endpoint::completions, {{"prompt", {"a", "b"}}, {"n", 2}, {"max_tokens", 4}});
  ASSERT_EQ(several.requests.size(), 4u);  // prompt-major: a, a, b, b
  EXPECT_EQ(several.requests[1].prompt_ids, served().tokenizer.encode("a", true));
  EXPECT_EQ(several.requests[2].prompt_ids, served().tokenizer.encode("b", true));
}

TEST(OpenAiProtocol, RefusalsNameTheirField) {
  const auto chat = [](const std::string& extra) {
    return refusal(Endpoint::chat, R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}");
  };
  EXPECT_EQ(refusal(Endpoint::chat, "{not json"), "400 ");
  EXPECT_EQ(refusal(Endpoint::chat, "[1]"), "400 ");
  EXPECT_EQ(refusal(Endpoint::chat, "{}"), "400 messages");
  EXPECT_EQ(refusal(Endpoint::chat, R"({"messages":[]})"), "400 messages");
  EXPECT_EQ(refusal(Endpoint::chat, R"({"messages":[{"content":"no role"}]})"), "400 messages[0]");
  EXPECT_EQ(refusal(Endpoint::chat, R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})"),
            "400 messages[0].content");
  EXPECT_EQ(chat(R"(,"model":"gpt-4o")"), "404 model");
  EXPECT_EQ(chat(R"(,"model":"tiny")"), "accepted");
  EXPECT_EQ(chat(R"(,"stream":true,"stream_options":{"include_usage":true})"), "accepted");
  EXPECT_EQ(chat(R"(,"stream":true,"logprobs":true)"), "400 logprobs") << "logprobs are not streamed";
  EXPECT_EQ(chat(R"(,"stream":false,"stream_options":{"include_usage":true})"), "400 stream_options");
  EXPECT_EQ(chat(R"(,"n":0)"), "400 n");
  EXPECT_EQ(chat(R"(,"n":9)"), "400 n");
  EXPECT_EQ(chat(R"(,"n":"2")"), "400 n");
  EXPECT_EQ(chat(R"(,"max_tokens":0)"), "400 max_tokens");
  EXPECT_EQ(chat(R"(,"max_tokens":600)"), "400 max_tokens");  // beyond the 512-token context
  EXPECT_EQ(chat(R"(,"temperature":-1)"), "400 temperature");
  EXPECT_EQ(chat(R"(,"top_p":0)"), "400 top_p");
  EXPECT_EQ(chat(R"(,"stop":[""])"), "400 stop");
  EXPECT_EQ(chat(R"(,"stop_token_ids":[999999])"), "400 stop_token_ids");
  EXPECT_EQ(chat(R"(,"top_logprobs":2)"), "400 top_logprobs");
  EXPECT_EQ(chat(R"(,"presence_penalty":0.5)"), "400 presence_penalty");
  EXPECT_EQ(chat(R"(,"logit_bias":{"5":1})"), "400 logit_bias");
  EXPECT_EQ(chat(R"(,"top_logprobs":0,"presence_penalty":0,"user":"u","response_format":null)"), "accepted");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1,-2]})"), "400 prompt");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":{}})"), "400 prompt");
  EXPECT_EQ(refusal(Endpoint::completions, R"({})"), "400 prompt");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1],"logprobs":5})"), "400 logprobs");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1],"echo":true})"), "400 echo");
  // Fields this server does not honour are refused by name, not silently ignored.
  EXPECT_EQ(chat(R"(,"response_format":{"type":"json_object"})"), "400 response_format");
  EXPECT_EQ(chat(R"(,"response_format":{"type":"text"})"), "accepted");
  EXPECT_EQ(chat(R"(,"tool_choice":"required")"), "400 tool_choice");
  EXPECT_EQ(chat(R"(,"tool_choice":"auto","metadata":{"k":"v"},"store":false)"), "accepted");
  EXPECT_EQ(chat(R"(,"min_p":0.1)"), "400 min_p");
  EXPECT_EQ(chat(R"(,"functions":[])"), "400 functions");
  EXPECT_EQ(chat(R"(,"echo":false)"), "400 echo") << "a completions field on the chat endpoint";
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1],"best_of":3})"), "400 best_of");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1],"suffix":"end"})"), "400 suffix");
  EXPECT_EQ(refusal(Endpoint::completions, R"({"prompt":[1],"messages":[]})"), "400 messages");
  // 2**63 parses as an unsigned number; it must not wrap to a negative max_tokens.
  EXPECT_EQ(chat(R"(,"max_tokens":9223372036854775808)"), "400 max_tokens");
}

TEST(OpenAiProtocol, RangeErrorsSayTheRange) {
  const auto message = [](const std::string& extra) {
    try {
      vinci::serve::parse_request(Endpoint::chat, R"({"messages":[{"role":"user","content":"hi"}])" + extra + "}",
                                  served().model);
    } catch (const vinci::serve::ProtocolError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const size_t prompt =
      parse(Endpoint::chat, {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}).requests[0].prompt_ids.size();
  EXPECT_EQ(message(R"(,"max_tokens":600)"),
            fmt::format("'max_tokens' is 600; it must be in [1, {}]: the context is 512 tokens and the prompt has {}",
                        512 - prompt, prompt));
  EXPECT_EQ(message(R"(,"max_tokens":9223372036854775808)"),
            "'max_tokens' is 9223372036854775808, beyond any range this server accepts");
  EXPECT_EQ(message(R"(,"n":9)"), "'n' is 9; it must be in [1, 8]");
  EXPECT_EQ(message(R"(,"top_p":1.5)"), "'top_p' is 1.5; it must be in (0, 1]");
  EXPECT_EQ(message(R"(,"temperature":-1)"), "'temperature' is -1; it must be 0 (greedy) or more");
}

vinci::llm::GenerationResult result(std::vector<int32_t> ids, std::vector<float> logprobs, std::string text,
                                    vinci::llm::FinishReason finish, std::string matched = "") {
  vinci::llm::GenerationResult r;
  r.token_ids = std::move(ids);
  r.logprobs = std::move(logprobs);
  r.text = std::move(text);
  r.finish_reason = finish;
  r.matched_stop = std::move(matched);
  return r;
}

TEST(OpenAiProtocol, ChatResponseIsVllmShaped) {
  const auto p = parse(Endpoint::chat, {{"messages", kMessages},
                                        {"n", 2},
                                        {"logprobs", true},
                                        {"return_token_ids", true},
                                        {"return_tokens_as_token_ids", true},
                                        {"max_tokens", 4}});
  const auto er = served().tokenizer.encode("er");
  ASSERT_EQ(er.size(), 1u);  // "er" is one token of the fixture vocabulary
  const std::vector<vinci::llm::GenerationResult> results = {
      result({er[0], 902}, {-0.25f, -0.5f}, "er", vinci::llm::FinishReason::stop, "<|im_end|>"),
      result({er[0], er[0], er[0], er[0]}, {-1, -1, -1, -1}, "erererer", vinci::llm::FinishReason::length)};
  const auto body = vinci::serve::render_response(p, results, served().model, "chatcmpl-1", 1700000000);
  const auto want_prompt = p.requests[0].prompt_ids;
  const ordered_json want = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"created", 1700000000},
      {"model", "tiny"},
      {"choices",
       {{{"index", 0},
         {"message",
          {{"role", "assistant"},
           {"content", "er"},
           {"reasoning_content", nullptr},
           {"tool_calls", ordered_json::array()}}},
         {"logprobs",
          {{"content",
            {{{"token", fmt::format("token_id:{}", er[0])},
              {"logprob", -0.25f},
              {"bytes", {101, 114}},
              {"top_logprobs", ordered_json::array()}},
             {{"token", "token_id:902"},
              {"logprob", -0.5f},
              {"bytes", {60, 124, 105, 109, 95, 101, 110, 100, 124, 62}},
              {"top_logprobs", ordered_json::array()}}}}}},
         {"finish_reason", "stop"},
         {"stop_reason", "<|im_end|>"},
         {"token_ids", {er[0], 902}}},
        {{"index", 1},
         {"message",
          {{"role", "assistant"},
           {"content", "erererer"},
           {"reasoning_content", nullptr},
           {"tool_calls", ordered_json::array()}}},
         {"logprobs", {{"content", ordered_json::array()}}},
         {"finish_reason", "length"},
         {"stop_reason", nullptr},
         {"token_ids", {er[0], er[0], er[0], er[0]}}}}},
      {"usage",
       {{"prompt_tokens", want_prompt.size()}, {"total_tokens", want_prompt.size() + 6}, {"completion_tokens", 6}}},
      {"prompt_token_ids", want_prompt}};
  EXPECT_EQ(body["choices"][0], want["choices"][0]);
  EXPECT_EQ(body["choices"][1]["logprobs"]["content"].size(), 4u);
  EXPECT_EQ(body["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(body["choices"][1]["stop_reason"], nullptr);
  EXPECT_EQ(body["usage"], want["usage"]);
  EXPECT_EQ(body["prompt_token_ids"], want["prompt_token_ids"]);
  EXPECT_EQ(served().tokenizer.token_bytes(902), "<|im_end|>");
}

TEST(OpenAiProtocol, CompletionResponseCarriesIdsPerChoiceAndTextOffsets) {
  const auto p = parse(Endpoint::completions, {{"prompt", {3, 4}}, {"logprobs", 1}, {"return_token_ids", true}});
  const auto er = served().tokenizer.encode("er");
  const auto body = vinci::serve::render_response(
      p, {result({er[0], er[0]}, {-0.5f, -1.5f}, "erer", vinci::llm::FinishReason::length)}, served().model, "cmpl-1",
      5);
  const ordered_json want_choice = {{"index", 0},
                                    {"text", "erer"},
                                    {"logprobs",
                                     {{"text_offset", {0, 2}},
                                      {"token_logprobs", {-0.5f, -1.5f}},
                                      {"tokens", {"er", "er"}},
                                      {"top_logprobs", nullptr}}},
                                    {"finish_reason", "length"},
                                    {"stop_reason", nullptr},
                                    {"prompt_token_ids", {3, 4}},
                                    {"token_ids", {er[0], er[0]}}};
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0], want_choice);
  EXPECT_EQ(body["usage"], (ordered_json{{"prompt_tokens", 2}, {"total_tokens", 4}, {"completion_tokens", 2}}));
  EXPECT_FALSE(body.contains("prompt_token_ids"));
}

TEST(OpenAiProtocol, IdsPastTheTokenizersVocabularyHaveNoText) {
  // The fixture tokenizer has 916 ids; a model's embedding may have more rows, and sample them.
  const auto p = parse(Endpoint::chat, {{"messages", kMessages}, {"logprobs", true}, {"max_tokens", 1}});
  const auto body = vinci::serve::render_response(p, {result({950}, {-3.0f}, "", vinci::llm::FinishReason::length)},
                                                  served().model, "c", 0);
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"][0]["token"], "");
  EXPECT_EQ(body["choices"][0]["logprobs"]["content"][0]["bytes"], ordered_json::array());
}

TEST(OpenAiProtocol, ErrorAndModelBodies) {
  EXPECT_EQ(vinci::serve::error_body(400, "BadRequestError", "n", "bad n"),
            ordered_json::parse(R"({"error":{"message":"bad n","type":"BadRequestError","param":"n","code":400}})"));
  const auto models = vinci::serve::models_body(served().model, 7);
  EXPECT_EQ(models["object"], "list");
  EXPECT_EQ(models["data"][0]["id"], "tiny");
  EXPECT_EQ(models["data"][0]["max_model_len"], 512);
}

TEST(OpenAiProtocol, AStreamHoldsBackWhatCouldStillChange) {
  using vinci::serve::streamable_length;
  EXPECT_EQ(streamable_length("hello", 0), 5u);
  EXPECT_EQ(streamable_length("hello", 3), 2u) << "a stop string of 4 bytes could still end in 'llo'";
  EXPECT_EQ(streamable_length("hi", 5), 0u);
  const std::string e_acute = "caf\xC3\xA9";  // "café": the é is 2 bytes
  EXPECT_EQ(streamable_length(e_acute, 0), 5u);
  EXPECT_EQ(streamable_length(e_acute.substr(0, 4), 0), 3u) << "half an é waits for its second byte";
  const std::string snowman = "a\xE2\x98\x83";  // U+2603, 3 bytes
  EXPECT_EQ(streamable_length(snowman.substr(0, 3), 0), 1u);
  EXPECT_EQ(streamable_length(snowman, 0), 4u);
  EXPECT_EQ(streamable_length("ab\xEF\xBF\xBD", 0), 2u) << "a replacement character may be a half character";
}

}  // namespace openai_protocol_test
