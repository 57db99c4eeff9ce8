// `vinci serve`: an OpenAI-compatible HTTP server over a backbone.
//
// `vinci serve`: an OpenAI-compatible HTTP server over a backbone (/v1/chat/completions,
// /v1/completions, /v1/models, /health). Concurrent clients' requests are batched into shared
// generate calls (RequestBatcher); the wire format is openai_protocol's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "serve/openai_protocol.h"
#include "serve/request_batcher.h"

namespace vinci::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (bind() says which)
  // Connections served at once, each on a thread started as it arrives (an idle socket holds one
  // until read_timeout_s drops it); further connections wait for a thread.
  size_t threads = 512;
  int read_timeout_s = 15;  // a socket that sends nothing for this long while its request is read
  BatcherOptions batching;
  std::string api_key;  // when set, /v1 requests need "Authorization: Bearer <key>"
};

// Binding beyond loopback without an API key serves the model to whoever reaches the port: the
// warning bind() logs, or nothing on loopback or with a key.
std::optional<std::string> exposure_warning(const ServerOptions& options);

class OpenAiServer {
 public:
  OpenAiServer(llm::Backbone& backbone, ServedModel model, ServerOptions options);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  int bind();   // the port listened on; throws naming the address when it is taken
  void run();   // serves until stop()
  void stop();  // from any thread

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace vinci::serve
