// The OpenAI-compatible backbone against a scripted server on loopback: the request bodies it
// sends, the vLLM-only fields it reads (token ids, "token_id:N" tokens, reasoning), and what it does
// with refused, slow, cut-short, garbled and rejected answers.
#include "llm/openai_backbone.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/setup_error.h"
#include "support/scripted_server.h"

namespace openai_backbone_test {

using namespace vinci::llm;
using nlohmann::json;
using nlohmann::ordered_json;
using vinci::test::ScriptedReply;
using vinci::test::ScriptedServer;

OpenAiOptions fast_options(const std::string& url) {
  OpenAiOptions o;
  o.base_url = url;
  o.model = "tiny";
  o.max_retries = 2;
  o.initial_backoff = std::chrono::milliseconds(5);
  o.max_backoff = std::chrono::milliseconds(20);
  o.timeout = std::chrono::seconds(20);
  return o;
}

GenerationRequest chat_request(const std::string& user) {
  GenerationRequest r;
  r.messages = {{"user", user}};
  r.sampling.max_new_tokens = 16;
  return r;
}

// vLLM's shape with return_token_ids and return_tokens_as_token_ids: prompt ids at the top,
// response ids in the choice, and each logprob's token as "token_id:N".
const char* kVllmChat = R"({
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "tiny",
  "prompt_token_ids": [151644, 872, 198, 9707],
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": "Hello", "reasoning_content": "think first",
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "select_skills", "arguments": "{\"think\": \"x\"}"}}]},
    "logprobs": {"content": [
      {"token": "token_id:9707", "logprob": -0.25, "bytes": [72], "top_logprobs": []},
      {"token": "token_id:151645", "logprob": -1.5, "bytes": [], "top_logprobs": []}]},
    "finish_reason": "tool_calls",
    "token_ids": [9707, 151645]
  }],
  "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
})";

TEST(OpenAiBackbone, ChatRequestCarriesSamplingToolsAndVllmExtras) {
  ScriptedServer server;
  server.push({200, kVllmChat});
  auto backbone = open_openai_backbone(fast_options(server.base_url()));
  GenerationRequest r = chat_request("hi");
  r.sampling.temperature = 0.7;
  r.sampling.top_p = 0.9;
  r.sampling.top_k = 20;
  r.sampling.seed = 7;
  r.sampling.stop_strings = {"</code>"};
  r.chat_extra["tools"] = ordered_json::array({{{"type", "function"}, {"function", {{"name", "select_skills"}}}}});
  r.chat_extra["enable_thinking"] = false;
  const auto results = backbone->generate(std::vector<GenerationRequest>{r});

  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].method, "POST");
  EXPECT_EQ(sent[0].path, "/v1/chat/completions");
  const json body = json::parse(sent[0].body);
  EXPECT_EQ(body["model"], "tiny");
  EXPECT_EQ(body["messages"][0]["content"], "hi");
  EXPECT_EQ(body["max_tokens"], 16);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.9);
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["stop"], json::array({"</code>"}));
  EXPECT_EQ(body["stream"], false);
  EXPECT_EQ(body["logprobs"], true);
  EXPECT_EQ(body["return_token_ids"], true);
  EXPECT_EQ(body["return_tokens_as_token_ids"], true);
  EXPECT_EQ(body["tools"][0]["function"]["name"], "select_skills");
  EXPECT_EQ(body["chat_template_kwargs"], json({{"enable_thinking", false}}));
  EXPECT_FALSE(body.contains("n"));

  ASSERT_EQ(results.size(), 1u);
  const GenerationResult& g = results[0];
  EXPECT_FALSE(g.error);
  EXPECT_EQ(g.text, "Hello");
  EXPECT_EQ(g.reasoning, "think first");
  EXPECT_EQ(g.prompt_ids, (std::vector<int32_t>{151644, 872, 198, 9707}));
  EXPECT_EQ(g.token_ids, (std::vector<int32_t>{9707, 151645}));
  EXPECT_EQ(g.logprobs, (std::vector<float>{-0.25f, -1.5f}));
  EXPECT_TRUE(g.token_ids_known);
  EXPECT_EQ(g.finish_reason, FinishReason::stop);
  ASSERT_EQ(g.tool_calls.size(), 1u);
  EXPECT_EQ(g.tool_calls[0]["function"]["name"], "select_skills");
}

TEST(OpenAiBackbone, GreedyPromptIdsGoToCompletionsAndTokenIdStringsAreRead) {
  ScriptedServer server;
  // Without return_token_ids' fields: the ids come from the "token_id:N" tokens alone.
  server.push({200, R"({"choices": [{"index": 0, "text": " world", "finish_reason": "length",
      "prompt_token_ids": [1, 2, 3],
      "logprobs": {"tokens": ["token_id:11", "token_id:12"], "token_logprobs": [-0.5, -0.125],
                   "top_logprobs": null, "text_offset": [0, 3]}}]})"});
  auto backbone = open_openai_backbone(fast_options(server.base_url()));
  GenerationRequest r;
  r.prompt_ids = {1, 2, 3};
  r.sampling.greedy = true;
  r.sampling.top_k = 5;  // meaningless when greedy: not sent
  r.sampling.max_new_tokens = 2;
  const auto results = backbone->generate(std::vector<GenerationRequest>{r});
  const json body = json::parse(server.requests().at(0).body);
  EXPECT_EQ(server.requests()[0].path, "/v1/completions");
  EXPECT_EQ(body["prompt"], json::array({1, 2, 3}));
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["logprobs"], 1);
  EXPECT_FALSE(body.contains("top_k"));
  EXPECT_FALSE(body.contains("top_p"));
  const GenerationResult& g = results.at(0);
  EXPECT_EQ(g.text, " world");
  EXPECT_EQ(g.token_ids, (std::vector<int32_t>{11, 12}));
  EXPECT_EQ(g.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(g.logprobs, (std::vector<float>{-0.5f, -0.125f}));
  EXPECT_EQ(g.finish_reason, FinishReason::length);
  EXPECT_TRUE(g.token_ids_known);
}

TEST(OpenAiBackbone, PlainOpenAiAnswerIsTextOnlyAndNotTrainable) {
  ScriptedServer server;
  server.push({200, R"({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
      "logprobs": {"content": [{"token": "ok", "logprob": -0.1, "bytes": [111, 107], "top_logprobs": []}]},
      "finish_reason": "stop"}]})"});
  OpenAiOptions o = fast_options(server.base_url());
  o.vllm_extras = false;
  auto backbone = open_openai_backbone(o);
  GenerationRequest r = chat_request("x");
  r.sampling.top_k = 3;
  r.chat_extra["enable_thinking"] = true;
  const auto g = backbone->generate(std::vector<GenerationRequest>{r}).at(0);
  const json body = json::parse(server.requests().at(0).body);
  for (const char* vllm_only : {"top_k", "return_token_ids", "return_tokens_as_token_ids", "chat_template_kwargs"})
    EXPECT_FALSE(body.contains(vllm_only)) << vllm_only;
  EXPECT_EQ(g.text, "ok");
  EXPECT_TRUE(g.token_ids.empty());
  EXPECT_EQ(g.logprobs, (std::vector<float>{-0.1f}));
  EXPECT_FALSE(g.token_ids_known);
  EXPECT_FALSE(g.error);
}

TEST(OpenAiBackbone, IdenticalRequestsShareOneCallWithN) {
  ScriptedServer server;
  // Choices out of order: they are placed by their index.
  server.push({200, R"({"prompt_token_ids": [5], "choices": [
      {"index": 2, "message": {"content": "c"}, "token_ids": [3], "finish_reason": "stop"},
      {"index": 0, "message": {"content": "a"}, "token_ids": [1], "finish_reason": "stop"},
      {"index": 1, "message": {"content": "b"}, "token_ids": [2], "finish_reason": "stop"}]})"});
  server.push({200, R"({"choices": [{"index": 0, "message": {"content": "other"}, "finish_reason": "stop"}]})"});
  OpenAiOptions serial = fast_options(server.base_url());
  serial.max_concurrency = 1;  // the two calls in a known order
  auto backbone = open_openai_backbone(serial);
  const std::vector<GenerationRequest> batch{chat_request("same"), chat_request("same"), chat_request("same"),
                                             chat_request("different")};
  const auto results = backbone->generate(batch);
  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(json::parse(sent[0].body)["n"], 3);
  EXPECT_FALSE(json::parse(sent[1].body).contains("n"));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].text, "a");
  EXPECT_EQ(results[1].text, "b");
  EXPECT_EQ(results[2].text, "c");
  EXPECT_EQ(results[2].token_ids, (std::vector<int32_t>{3}));
  EXPECT_EQ(results[2].prompt_ids, (std::vector<int32_t>{5}));
  EXPECT_EQ(results[3].text, "other");
}

TEST(OpenAiBackbone, RateLimitsAndServerErrorsAreRetried) {
  ScriptedServer server;
  server.push({429, R"({"error": {"message": "slow down"}})"});
  server.push({503, R"({"detail": "warming up"})"});
  server.push({200, R"({"choices": [{"index": 0, "message": {"content": "done"}, "finish_reason": "stop"}]})"});
  auto backbone = open_openai_backbone(fast_options(server.base_url()));
  const auto g = backbone->generate(std::vector<GenerationRequest>{chat_request("x")}).at(0);
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_FALSE(g.error);
  EXPECT_EQ(g.text, "done");
}

TEST(OpenAiBackbone, ExhaustedRetriesGiveATypedErrorWithTheServersWords) {
  ScriptedServer server;
  for (int i = 0; i < 3; ++i) server.push({429, R"({"error": {"message": "slow down"}})"});
  auto backbone = open_openai_backbone(fast_options(server.base_url()));  // 1 try + 2 retries
  const auto g = backbone->generate(std::vector<GenerationRequest>{chat_request("x")}).at(0);
  EXPECT_EQ(server.requests().size(), 3u);
  ASSERT_TRUE(g.error);
  EXPECT_EQ(g.error->kind, "rate_limited");
  EXPECT_NE(g.error->message.find("slow down"), std::string::npos) << g.error->message;
  EXPECT_FALSE(g.token_ids_known);
}

TEST(OpenAiBackbone, BadRequestsAndGarbledBodiesAreNotRetried) {
  ScriptedServer server;
  server.push({400, R"({"error": {"message": "Unrecognized request argument: return_token_ids"}})"});
  server.push({200, "<html>proxy error</html>", ScriptedReply::Mode::normal, {}, "text/html"});
  server.push({200, R"({"choices": [{"index": 0}]})"});
  OpenAiOptions o = fast_options(server.base_url());
  o.max_concurrency = 1;
  auto backbone = open_openai_backbone(o);
  const std::vector<GenerationRequest> batch{chat_request("a"), chat_request("b"), chat_request("c")};
  const auto results = backbone->generate(batch);
  EXPECT_EQ(server.requests().size(), 3u);
  ASSERT_TRUE(results[0].error);
  EXPECT_EQ(results[0].error->kind, "bad_request");
  EXPECT_NE(results[0].error->message.find("--no-vllm-extras"), std::string::npos) << results[0].error->message;
  ASSERT_TRUE(results[1].error);
  EXPECT_EQ(results[1].error->kind, "garbled");
  ASSERT_TRUE(results[2].error);
  EXPECT_EQ(results[2].error->kind, "garbled");  // a choice without a message
}

// A URL on a loopback port nobody listens on: one bound, then closed.
std::string unused_url() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1";
}

TEST(OpenAiBackbone, TransportFailuresAreClassified) {
  {
    auto backbone = open_openai_backbone(fast_options(unused_url()));
    const auto g = backbone->generate(std::vector<GenerationRequest>{chat_request("x")}).at(0);
    ASSERT_TRUE(g.error);
    EXPECT_EQ(g.error->kind, "refused");
  }
  {
    ScriptedServer server;
    server.push(
        {200, R"({"choices": [{"index": 0, "message": {"content": "cut here"}}]})", ScriptedReply::Mode::truncated});
    server.push({200, "", ScriptedReply::Mode::close});
    OpenAiOptions o = fast_options(server.base_url());
    o.max_retries = 1;
    auto backbone = open_openai_backbone(o);
    const auto g = backbone->generate(std::vector<GenerationRequest>{chat_request("x")}).at(0);
    EXPECT_EQ(server.requests().size(), 2u);  // truncated, retried, closed: both transport failures
    ASSERT_TRUE(g.error);
    EXPECT_EQ(g.error->kind, "truncated");  // a connection closed without a byte reads as truncated too
  }
  {
    ScriptedServer server;
    server.push({200, "", ScriptedReply::Mode::hang});
    OpenAiOptions o = fast_options(server.base_url());
    o.max_retries = 0;
    o.timeout = std::chrono::milliseconds(300);
    auto backbone = open_openai_backbone(o);
    const auto g = backbone->generate(std::vector<GenerationRequest>{chat_request("x")}).at(0);
    ASSERT_TRUE(g.error);
    EXPECT_EQ(g.error->kind, "timeout");
  }
}

TEST(OpenAiBackbone, ApiKeyComesFromTheNamedVariable) {
  ScriptedServer server;
  server.push({200, R"({"choices": [{"index": 0, "message": {"content": ""}, "finish_reason": "stop"}]})"});
  server.push({401, R"({"error": {"message": "bad key"}})"});
  ::setenv("VINCI_TEST_LLM_KEY", "sk-test-123", 1);
  OpenAiOptions o = fast_options(server.base_url());
  o.api_key_env = "VINCI_TEST_LLM_KEY";
  o.max_concurrency = 1;
  auto backbone = open_openai_backbone(o);
  const auto results = backbone->generate(std::vector<GenerationRequest>{chat_request("a"), chat_request("b")});
  ::unsetenv("VINCI_TEST_LLM_KEY");
  EXPECT_EQ(server.requests().at(0).headers.at("authorization"), "Bearer sk-test-123");
  EXPECT_FALSE(results[0].error);
  ASSERT_TRUE(results[1].error);
  EXPECT_EQ(results[1].error->kind, "unauthorized");  // not retried: two requests in all
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(OpenAiBackbone, ConcurrencyIsCapped) {
  ScriptedServer server;
  std::vector<GenerationRequest> batch;
  for (int i = 0; i < 6; ++i) {
    server.push({200, R"({"choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": "stop"}]})",
                 ScriptedReply::Mode::normal, std::chrono::milliseconds(150)});
    batch.push_back(chat_request("request " + std::to_string(i)));
  }
  OpenAiOptions o = fast_options(server.base_url());
  o.max_concurrency = 2;
  auto backbone = open_openai_backbone(o);
  const auto results = backbone->generate(batch);
  EXPECT_EQ(server.requests().size(), 6u);
  EXPECT_EQ(server.max_in_flight(), 2);
  for (const auto& r : results) EXPECT_FALSE(r.error);
}

TEST(OpenAiBackbone, BadOptionsAreRefusedUpFront) {
  OpenAiOptions o;
  o.base_url = "127.0.0.1:8000";
  o.model = "m";
  EXPECT_THROW(open_openai_backbone(o), std::invalid_argument);
  o.base_url = "http://127.0.0.1:8000/v1";
  o.model.clear();
  EXPECT_THROW(open_openai_backbone(o), std::invalid_argument);
}

// The probe a command makes before any agent runs: nothing listening is a setup error naming the
// URL; a server without a /models route passes and leaves the chat script untouched.
TEST(OpenAiBackbone, ServerCheckFailsFastOnlyWhenNothingAnswers) {
  const std::string dead = unused_url();
  try {
    check_openai_server(fast_options(dead));
    ADD_FAILURE() << "no error for a port nobody listens on";
  } catch (const vinci::core::SetupError& e) {
    EXPECT_NE(std::string(e.what()).find(dead), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not answer"), std::string::npos) << e.what();
  }

  ScriptedServer server;
  server.push({200, R"({"choices": [{"index": 0, "message": {"content": "hi"}, "finish_reason": "stop"}]})"});
  EXPECT_NO_THROW(check_openai_server(fast_options(server.base_url())));
  EXPECT_TRUE(server.requests().empty());
  const auto g = open_openai_backbone(fast_options(server.base_url()))
                     ->generate(std::vector<GenerationRequest>{chat_request("x")});
  EXPECT_EQ(g.at(0).text, "hi");
}

// A server that answers but refuses the key, or fails its model list, is a setup error naming the
// status and what to do; a list without the model only warns (transformers serve loads by name).
TEST(OpenAiBackbone, ServerCheckNamesARefusedKey) {
  ScriptedServer server;
  auto options = fast_options(server.base_url());
  options.api_key_env = "VINCI_TEST_SERVER_KEY";
  for (const int status : {401, 403}) {
    server.answer_gets({status, R"({"error": {"message": "bad key"}})"});
    try {
      check_openai_server(options);
      ADD_FAILURE() << "no error for HTTP " << status;
    } catch (const vinci::core::SetupError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("refused the key (HTTP " + std::to_string(status) + ")"), std::string::npos) << what;
      EXPECT_NE(what.find("$VINCI_TEST_SERVER_KEY"), std::string::npos) << what;
    }
  }
  server.answer_gets({500, "model list broken"});
  try {
    check_openai_server(options);
    ADD_FAILURE() << "no error for HTTP 500";
  } catch (const vinci::core::SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("answered HTTP 500: model list broken"), std::string::npos) << e.what();
  }
  server.answer_gets({200, R"({"object": "list", "data": [{"id": "some-other-model"}]})"});
  EXPECT_NO_THROW(check_openai_server(options));
  EXPECT_TRUE(server.requests().empty()) << "the probes are GETs, not scripted exchanges";
}

}  // namespace openai_backbone_test
