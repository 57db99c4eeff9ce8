// `vinci serve`: an OpenAI-compatible HTTP server over a backbone (/v1/chat/completions,
// /v1/completions, /v1/models, /health). Concurrent clients' requests are batched into shared
// generate calls (RequestBatcher); the wire format is openai_protocol's.
#pragma once

#include <memory>
#include <string>

#include "serve/openai_protocol.h"
#include "serve/request_batcher.h"

namespace vinci::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;      // 0: any free port (bind() says which)
  size_t threads = 64;  // connections served at once; each waits on its batch
  BatcherOptions batching;
  std::string api_key;  // when set, /v1 requests need "Authorization: Bearer <key>"
};

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
