// `vinci serve` over HTTP, on the routes and refusals that need no model: /health, /v1/models,
// the API key, unknown routes and wrong methods, requests refused before generation, a port already
// taken, idle sockets that must not stall the server, and the warning for an unguarded address.
// (Completions themselves are covered end to end by tests/serve/openai_client_test.py.)
#include "serve/openai_server.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "support/fake_backbone.h"
#include "support/gated_backbone.h"
#include "text/tokenizer.h"

namespace openai_server_test {
using namespace vinci::serve;
using nlohmann::json;
using vinci::core::HttpRequest;
using vinci::core::HttpResponse;

// A server on a free loopback port, serving on its own thread until the test ends.
class RunningServer {
 public:
  explicit RunningServer(std::string api_key = "", size_t threads = 2) {
    ServedModel model;
    model.name = "tiny";
    model.max_model_len = 4096;
    ServerOptions options;
    options.port = 0;
    options.threads = threads;
    options.api_key = std::move(api_key);
    server_ = std::make_unique<OpenAiServer>(backbone_, model, options);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    // stop() is lost on a server that has not started listening yet: wait until it answers.
    send("GET", "/health");
  }
  ~RunningServer() {
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }

  HttpResponse send(const std::string& method, const std::string& path, const std::string& body = "",
                    std::map<std::string, std::string> headers = {},
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    HttpRequest r;
    r.method = method;
    r.url = fmt::format("http://127.0.0.1:{}{}", port_, path);
    r.body = body;
    r.headers = std::move(headers);
    r.headers["Content-Type"] = "application/json";
    r.timeout = timeout;
    return vinci::core::http_send(r);
  }

 private:
  vinci::test::FakeBackbone backbone_;
  std::unique_ptr<OpenAiServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(OpenAiServer, HealthAndModels) {
  const RunningServer server;
  EXPECT_EQ(server.send("GET", "/health").status, 200);
  const HttpResponse models = server.send("GET", "/v1/models");
  ASSERT_EQ(models.status, 200);
  const json body = json::parse(models.body);
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 1u);
  EXPECT_EQ(body["data"][0]["id"], "tiny");
  EXPECT_EQ(body["data"][0]["object"], "model");
  EXPECT_EQ(body["data"][0]["max_model_len"], 4096);
}

TEST(OpenAiServer, AnApiKeyGuardsV1ButNotHealth) {
  const RunningServer server("sekrit");
  EXPECT_EQ(server.send("GET", "/health").status, 200);
  const HttpResponse refused = server.send("GET", "/v1/models");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(json::parse(refused.body)["error"]["type"], "AuthenticationError");
  EXPECT_EQ(server.send("GET", "/v1/models", "", {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(server.send("GET", "/v1/models", "", {{"Authorization", "Bearer sekrit"}}).status, 200);
}

TEST(OpenAiServer, UnknownRoutesAndMethodsAnswerInOpenAisErrorShape) {
  const RunningServer server;
  const HttpResponse missing = server.send("GET", "/v1/embeddings");
  EXPECT_EQ(missing.status, 404);
  const json error = json::parse(missing.body)["error"];
  EXPECT_EQ(error["type"], "NotFoundError");
  EXPECT_EQ(error["code"], 404);
  EXPECT_EQ(error["param"], nullptr);
  EXPECT_NE(error["message"].get<std::string>().find("no route GET /v1/embeddings"), std::string::npos) << error;
}

TEST(OpenAiServer, AWrongMethodOnARouteIs405NamingTheRightOne) {
  const RunningServer server;
  for (const auto& [method, path, allowed] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"GET", "/v1/chat/completions", "POST"},
                                                                      {"GET", "/v1/completions", "POST"},
                                                                      {"POST", "/health", "GET"},
                                                                      {"DELETE", "/v1/models", "GET"}}) {
    const HttpResponse r = server.send(method, path, method == "GET" ? "" : "{}");
    EXPECT_EQ(r.status, 405) << method << " " << path;
    const json error = json::parse(r.body)["error"];
    EXPECT_EQ(error["code"], 405);
    EXPECT_EQ(error["message"], fmt::format("{} is not allowed on {}; use {}", method, path, allowed));
  }
}

// A socket to the server that sends part of a request head and then nothing.
struct IdleSocket {
  int fd = -1;
  explicit IdleSocket(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ADD_FAILURE() << "connect failed";
    const char head[] = "POST /v1/completions HTTP/1.1\r\nHost: x\r\n";
    if (::send(fd, head, sizeof head - 1, 0) < 0) ADD_FAILURE() << "send failed";
  }
  ~IdleSocket() { ::close(fd); }
  IdleSocket(const IdleSocket&) = delete;
  IdleSocket& operator=(const IdleSocket&) = delete;
};

TEST(OpenAiServer, SixtyFourIdleSocketsLeaveHealthAnswering) {
  const RunningServer server("", ServerOptions{}.threads);
  std::vector<std::unique_ptr<IdleSocket>> idle;
  for (int i = 0; i < 64; ++i) idle.push_back(std::make_unique<IdleSocket>(server.port()));
  // Under a pool of 64 fixed threads the idle sockets held every one for the read timeout; now each
  // connection gets a thread of its own as it arrives, and the listen backlog holds the burst (at
  // httplib's 5, dropped SYNs were retried after a second). A second is the bound: nothing is slow.
  EXPECT_EQ(server.send("GET", "/health", "", {}, std::chrono::seconds(1)).status, 200);
  EXPECT_EQ(server.send("GET", "/v1/models", "", {}, std::chrono::seconds(1)).status, 200);
}

TEST(OpenAiServer, ServingBeyondLoopbackWithoutAKeyIsWarnedOf) {
  ServerOptions options;
  EXPECT_FALSE(exposure_warning(options).has_value()) << "127.0.0.1";
  options.host = "localhost";
  EXPECT_FALSE(exposure_warning(options).has_value());
  options.host = "0.0.0.0";
  const auto warning = exposure_warning(options);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("listening on 0.0.0.0 without an API key"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--api-key-env"), std::string::npos) << *warning;
  options.api_key = "k";
  EXPECT_FALSE(exposure_warning(options).has_value()) << "a key guards it";
}

TEST(OpenAiServer, MalformedRequestsAreRefusedBeforeGeneration) {
  const RunningServer server;
  const HttpResponse not_json = server.send("POST", "/v1/chat/completions", "{not json");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_NE(json::parse(not_json.body)["error"]["message"].get<std::string>().find("not JSON"), std::string::npos);
  EXPECT_EQ(server.send("POST", "/v1/completions", "[1, 2]").status, 400);
  const HttpResponse other_model = server.send("POST", "/v1/chat/completions", R"({"model": "gpt-4", "messages": []})");
  EXPECT_EQ(other_model.status, 404);
  const json error = json::parse(other_model.body)["error"];
  EXPECT_EQ(error["param"], "model");
  EXPECT_NE(error["message"].get<std::string>().find("`gpt-4` does not exist"), std::string::npos) << error;
}

TEST(OpenAiServer, APortInUseIsNamedInTheError) {
  const RunningServer first;
  vinci::test::FakeBackbone backbone;
  ServerOptions options;
  options.port = first.port();
  OpenAiServer second(backbone, ServedModel{}, options);
  try {
    second.bind();
    FAIL() << "bound a port a running server listens on";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("cannot listen on 127.0.0.1:{}", first.port())), std::string::npos)
        << e.what();
  }
  // The first server is unaffected.
  EXPECT_EQ(first.send("GET", "/health").status, 200);
}

TEST(OpenAiServer, AnAddressNotOfThisMachineIsNamedInTheError) {
  vinci::test::FakeBackbone backbone;
  ServerOptions options;
  options.host = "192.0.2.1";  // TEST-NET-1 (RFC 5737): never a local address
  options.port = 18000;
  OpenAiServer server(backbone, ServedModel{}, options);
  try {
    server.bind();
    FAIL() << "bound an address this machine does not have";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 192.0.2.1:18000"), std::string::npos) << e.what();
  }
}
// Generates one character at a time until the request's on_text says stop, for at most 10 s: a
// stream whose client left must say stop. Nothing here is timed; the bound only ends a failing run.
class EndlessBackbone final : public vinci::llm::Backbone {
 public:
  std::vector<vinci::llm::GenerationResult> generate(std::span<const vinci::llm::GenerationRequest> requests) override {
    std::vector<vinci::llm::GenerationResult> out(requests.size());
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      text += "x";
      if (!requests[0].on_text(text)) {
        cancelled = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out[0].text = text;
    out[0].token_ids.assign(text.size(), 1);
    return out;
  }
  std::string model_name() const override { return "endless"; }
  std::atomic<bool> cancelled = false;
};

TEST(OpenAiServer, AClientThatLeavesMidStreamCancelsItsSequence) {
  EndlessBackbone backbone;
  ServedModel model;
  model.name = "endless";
  model.max_model_len = 1 << 20;
  const vinci::text::Tokenizer tokenizer = vinci::text::Tokenizer::from_file(
      std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2/tokenizer.json");
  model.tokenizer = &tokenizer;
  ServerOptions options;
  options.port = 0;
  OpenAiServer server(backbone, model, options);
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  {
    IdleSocket client(port);  // its request head is sent below, whole
    const std::string body = R"({"prompt": [1, 2], "max_tokens": 1000000, "stream": true})";
    const std::string rest =
        fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}", body.size(), body);
    ASSERT_GT(::send(client.fd, rest.data(), rest.size(), 0), 0);
    char buffer[256];
    ASSERT_GT(::recv(client.fd, buffer, sizeof buffer, 0), 0) << "the stream's first bytes";
  }  // the client closes its socket
  for (int i = 0; i < 1000 && !backbone.cancelled; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(backbone.cancelled) << "the sequence ran on after its client left";
  server.stop();
  serving.join();
}

// The raw response to one completion request, headers included.
std::string raw_completion(int port) {
  IdleSocket socket(port);  // sends the request line and Host
  const std::string body = R"({"prompt": [1, 2], "max_tokens": 2})";
  const std::string rest = fmt::format(
      "Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", body.size(), body);
  if (::send(socket.fd, rest.data(), rest.size(), 0) < 0) return "send failed";
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(socket.fd, buffer, sizeof buffer, 0)) > 0;)
    response.append(buffer, static_cast<size_t>(n));
  return response;
}

// --max-queued 1: one request generating, one waiting to join; the third is refused with 503 and
// Retry-After (which of the two later ones waits is up to their arrival) and the others complete.
TEST(OpenAiServer, AFullQueueIsAnswered503WithRetryAfter) {
  vinci::test::GatedBackbone backbone;
  ServedModel model;
  model.name = "gated";
  model.max_model_len = 4096;
  const vinci::text::Tokenizer tokenizer = vinci::text::Tokenizer::from_file(
      std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2/tokenizer.json");
  model.tokenizer = &tokenizer;
  ServerOptions options;
  options.port = 0;
  options.batching.max_queued = 1;
  options.batching.gather_window = std::chrono::milliseconds(0);
  OpenAiServer server(backbone, model, options);
  const int port = server.bind();
  std::thread serving([&] { server.run(); });
  std::string first;
  std::thread holding([&] { first = raw_completion(port); });
  EXPECT_TRUE(backbone.wait_running()) << "the first request never reached the backbone";
  std::vector<std::string> later(2);
  std::atomic<int> refused = 0;
  std::vector<std::thread> clients;
  for (size_t i = 0; i < later.size(); ++i)
    clients.emplace_back([&, i] {
      later[i] = raw_completion(port);
      if (later[i].rfind("HTTP/1.1 503", 0) == 0) ++refused;
    });
  for (int i = 0; i < 1000 && refused == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  backbone.open();
  for (auto& c : clients) c.join();
  holding.join();
  server.stop();
  serving.join();
  EXPECT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first;
  ASSERT_EQ(refused, 1) << later[0] << "\n---\n" << later[1];
  const std::string& busy = later[0].rfind("HTTP/1.1 503", 0) == 0 ? later[0] : later[1];
  const std::string& served = &busy == &later[0] ? later[1] : later[0];
  EXPECT_NE(busy.find("Retry-After: 1"), std::string::npos) << busy;
  EXPECT_NE(busy.find("1 requests are waiting to be admitted (at most 1)"), std::string::npos) << busy;
  EXPECT_EQ(served.rfind("HTTP/1.1 200", 0), 0u) << served;
}

}  // namespace openai_server_test
