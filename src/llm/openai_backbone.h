// A Backbone on an OpenAI-compatible server (vLLM, SGLang, transformers serve, hosted APIs).
//
// Requests with messages go to /v1/chat/completions, requests with prompt ids to /v1/completions.
// With vLLM's extras on (the default), the server also returns the prompt and response token ids,
// so rollouts stay token-exact; a server that returns none gives results with token_ids_known false,
// which training must not use.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "llm/backbone.h"

namespace vinci::llm {

struct OpenAiOptions {
  std::string base_url;                        // e.g. http://127.0.0.1:8000/v1
  std::string model;                           // the served model's name
  std::string api_key_env = "OPENAI_API_KEY";  // environment variable holding the key; unset: no key
  // vLLM's return_token_ids / return_tokens_as_token_ids, top_k, stop_token_ids, ignore_eos and
  // chat_template_kwargs. Strict servers (OpenAI's own) reject unknown fields: turn this off there.
  bool vllm_extras = true;
  int max_concurrency = 8;  // requests in flight at once, over all callers
  int max_retries = 4;      // after the first try, on refused/timeout/truncated, 429 and 5xx
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{8000};
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
};

std::unique_ptr<Backbone> open_openai_backbone(const OpenAiOptions& options);

// Asks the server for its models (GET /models) once, without retries, so that a command fails
// before any agent runs: throws core::SetupError when nothing answers at the URL or the key is
// refused; warns when the server lists models and options.model is not among them. A server
// without the route (404) passes: not every OpenAI-compatible server has it.
void check_openai_server(const OpenAiOptions& options);

}  // namespace vinci::llm
