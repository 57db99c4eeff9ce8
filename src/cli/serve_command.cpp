// vinci serve: a checkpoint behind an OpenAI-compatible HTTP server.
//
// vinci serve: a checkpoint (native backbone) behind an OpenAI-compatible HTTP server, so any
// OpenAI client, vinci optimize --llm included, can use a model trained by vinci.
#include <csignal>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/backbone_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "llm/model_config.h"
#include "serve/openai_server.h"

namespace vinci::cli {

namespace {

struct ServeOptions {
  BackboneOptions backbone;
  std::string served_name, api_key_env;
  int64_t max_model_len = 0;
  int gather_ms = 10;
  serve::ServerOptions server;
};

int run_serve(ServeOptions& o) {
  // SIGINT/SIGTERM go to one thread that stops the server, so every worker thread the server and
  // libtorch start inherits them blocked and in-flight requests end cleanly.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto backbone = open_backbone(o.backbone);
  const llm::ModelConfig config = llm::load_model_config(o.backbone.model);
  serve::ServedModel model;
  model.name = o.served_name.empty() ? o.backbone.model : o.served_name;
  model.tokenizer = &backbone->tokenizer();
  model.render_chat = [&backbone](const nlohmann::ordered_json& messages, const nlohmann::ordered_json& extra) {
    return backbone->render_chat(messages, extra, /*add_generation_prompt=*/true);
  };
  model.vocab_size = static_cast<int32_t>(config.vocab_size);
  model.max_model_len = o.max_model_len > 0 ? o.max_model_len : config.max_position_embeddings;
  if (o.max_model_len > config.max_position_embeddings)
    spdlog::warn("--max-model-len {} exceeds the checkpoint's max_position_embeddings {}", o.max_model_len,
                 config.max_position_embeddings);
  if (!o.api_key_env.empty()) {
    const char* key = std::getenv(o.api_key_env.c_str());
    if (!key || !*key)
      throw std::runtime_error(fmt::format("--api-key-env {}: the variable is unset or empty", o.api_key_env));
    o.server.api_key = key;
  }
  o.server.batching.gather_window = std::chrono::milliseconds(o.gather_ms);

  serve::OpenAiServer server(*backbone, model, o.server);
  const int port = server.bind();
  std::thread stopper([&server, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    spdlog::info("signal {}: stopping", signal);
    server.stop();
  });
  // The line scripts wait for (the port is only known here when --port 0).
  fmt::print("vinci serve: {} on http://{}:{}/v1 (context {} tokens, batches of up to {})\n", model.name, o.server.host,
             port, model.max_model_len, o.server.batching.max_batch);
  std::fflush(stdout);
  server.run();
  // A stop that came from elsewhere than the signal thread: wake it so it can be joined.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return 0;
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  add_backbone_options(app, o->backbone);
  app.add_option("--served-model-name", o->served_name,
                 "the name clients pass as \"model\" (default: --model as given)");
  app.add_option("--host", o->server.host, "address to listen on (0.0.0.0: every interface)")->capture_default_str();
  app.add_option("--port", o->server.port, "port to listen on (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--max-model-len", o->max_model_len,
                 "prompt + completion tokens at most (default: the checkpoint's "
                 "max_position_embeddings)");
  app.add_option("--max-batch", o->server.batching.max_batch, "requests generated together at most")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--prefill-chunk", o->server.batching.prefill_chunk,
                 "prompt tokens a joining request prefills per step, so that a long prompt does not stall the "
                 "requests decoding beside it (0: whole prompts)")
      ->capture_default_str();
  app.add_option("--kv-cache-tokens", o->server.batching.kv_cache_tokens,
                 "tokens the KV cache may hold, all requests together (0: as many as memory allows); at the limit "
                 "a request waits to start, and the running request that started last is preempted and later "
                 "recomputed")
      ->capture_default_str();
  app.add_option("--max-queued", o->server.batching.max_queued,
                 "requests waiting to join the running batch, at most; beyond it a request gets 503 with Retry-After")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--gather-ms", o->gather_ms, "how long an idle server waits for more requests to batch with the first")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--threads", o->server.threads,
                 "connections served at once (a thread starts per connection up to this; idle ones are dropped "
                 "after --read-timeout)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--read-timeout", o->server.read_timeout_s,
                 "seconds a connection may send nothing while its request is read, before it is dropped")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--api-key-env", o->api_key_env,
                 "environment variable holding the key clients must send (default: none)");
  return [o] { return run_serve(*o); };
}

}  // namespace vinci::cli
