// One HTTP request against a scripted loopback server: what is sent, what comes back, and how
// each transport failure is classified (the callers retry on some kinds and give up on others).
#include "core/http_client.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/scripted_server.h"

namespace http_client_test {
using namespace vinci::core;
using vinci::test::ScriptedReply;
using vinci::test::ScriptedServer;

HttpRequest post(const ScriptedServer& server, std::string body) {
  HttpRequest r;
  r.url = server.base_url() + "/chat/completions";
  r.body = std::move(body);
  r.headers = {{"Content-Type", "application/json"}, {"Authorization", "Bearer k"}};
  r.timeout = std::chrono::seconds(10);
  return r;
}

HttpError::Kind kind_of_failure(const HttpRequest& request) {
  try {
    http_send(request);
  } catch (const HttpError& e) {
    EXPECT_EQ(e.url(), request.url);
    EXPECT_NE(std::string(e.what()).find(request.method + " " + request.url + ": "), std::string::npos) << e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return HttpError::Kind::transport;
}

TEST(HttpClient, SendsMethodPathHeadersAndBody) {
  ScriptedServer server;
  server.push(ScriptedReply{200, R"({"ok": true})"});
  const HttpResponse response = http_send(post(server, R"({"q": "é"})"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, R"({"ok": true})");
  EXPECT_EQ(response.content_type, "application/json");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].body, R"({"q": "é"})");
  EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer k");
}

TEST(HttpClient, AnErrorStatusIsAResponseNotAnError) {
  ScriptedServer server;
  server.push(ScriptedReply{503, R"({"error": "busy"})"});
  const HttpResponse response = http_send(post(server, "{}"));
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.body, R"({"error": "busy"})");
}

TEST(HttpClient, AnEmptyBodyIsSentAsSuch) {
  ScriptedServer server;
  server.push(ScriptedReply{200, "{}"});
  http_send(post(server, ""));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].body, "");
}

TEST(HttpClient, NothingListeningIsRefused) {
  int port;
  {
    ScriptedServer closed;  // a port that was free a moment ago, and is closed again
    port = closed.port();
  }
  HttpRequest r;
  r.url = fmt::format("http://127.0.0.1:{}/v1/models", port);
  EXPECT_EQ(kind_of_failure(r), HttpError::Kind::refused);
}

TEST(HttpClient, AHangIsATimeout) {
  ScriptedServer server;
  server.push(ScriptedReply{200, "{}", ScriptedReply::Mode::hang});
  HttpRequest r = post(server, "{}");
  r.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of_failure(r), HttpError::Kind::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HttpClient, ABodyCutShortIsTruncated) {
  ScriptedServer server;
  server.push(ScriptedReply{200, std::string(1000, 'x'), ScriptedReply::Mode::truncated});
  EXPECT_EQ(kind_of_failure(post(server, "{}")), HttpError::Kind::truncated);
}

TEST(HttpClient, AConnectionClosedWithoutAByteIsTruncated) {
  ScriptedServer server;
  server.push(ScriptedReply{200, "", ScriptedReply::Mode::close});
  EXPECT_EQ(kind_of_failure(post(server, "{}")), HttpError::Kind::truncated);
}

TEST(HttpClient, KindNames) {
  EXPECT_STREQ(http_error_kind_name(HttpError::Kind::refused), "refused");
  EXPECT_STREQ(http_error_kind_name(HttpError::Kind::timeout), "timeout");
  EXPECT_STREQ(http_error_kind_name(HttpError::Kind::truncated), "truncated");
  EXPECT_STREQ(http_error_kind_name(HttpError::Kind::transport), "transport");
}
}  // namespace http_client_test
