#include "serve/openai_server.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include "serve/elastic_task_queue.h"

namespace vinci::serve {

using nlohmann::ordered_json;

namespace {

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_json(httplib::Response& res, int status, const ordered_json& body) {
  res.status = status;
  // Token strings may be pieces of a UTF-8 character: replaced, as vLLM's detokenizer does.
  res.set_content(body.dump(-1, ' ', false, ordered_json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& type, const std::string& param,
                const std::string& message) {
  send_json(res, status, error_body(status, type, param, message));
}

// The routes and the one method each answers, for a 405 naming it.
const std::map<std::string, std::string> kRoutes = {
    {"/health", "GET"}, {"/v1/models", "GET"}, {"/v1/chat/completions", "POST"}, {"/v1/completions", "POST"}};

// One streamed response: the events the generation pushes and the connection's thread writes.
struct Stream {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::string> events;
  bool finished = false;
  std::atomic<bool> gone = false;  // the client stopped reading: its sequences are cancelled
  void push(const ordered_json& body) {
    std::lock_guard lock(mutex);
    events.push_back("data: " + body.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n\n");
    ready.notify_one();
  }
};

class ElasticQueue final : public httplib::TaskQueue {
 public:
  explicit ElasticQueue(size_t max_threads) : queue_(max_threads) {}
  void enqueue(std::function<void()> fn) override { queue_.enqueue(std::move(fn)); }
  void shutdown() override { queue_.shutdown(); }

 private:
  ElasticTaskQueue queue_;
};

}  // namespace

struct OpenAiServer::Impl {
  Impl(llm::Backbone& backbone, ServedModel model, ServerOptions options)
      : model(std::move(model)),
        options(std::move(options)),
        batcher(backbone, this->options.batching,
                [](const SubmissionStats& s) {
                  spdlog::info("done: {} request(s), {} new tokens in {:.2f} s ({:.2f} s queued, joined a batch of {})",
                               s.requests, s.new_tokens, s.seconds, s.queued_seconds, s.batch);
                }),
        ids(std::random_device{}()) {
    const size_t threads = std::max<size_t>(1, this->options.threads);
    server.new_task_queue = [threads] { return new ElasticQueue(threads); };
    // A request arrives in seconds; a socket that sends nothing for this long is dropped, so idle
    // ones free their thread. A long generation is not a read: the client's own timeout rules it.
    server.set_read_timeout(std::chrono::seconds(this->options.read_timeout_s));
    server.set_write_timeout(std::chrono::minutes(10));
    server.set_payload_max_length(64u << 20);
    // httplib's default sets SO_REUSEPORT, which lets a second server bind a port one already
    // listens on (the kernel then splits the connections between them): SO_REUSEADDR alone still
    // allows a restart over connections in TIME_WAIT, and bind() refuses a port in use.
    server.set_socket_options([this](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_socket = sock;
    });
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (this->options.api_key.empty() || req.path.rfind("/v1/", 0) != 0)
        return httplib::Server::HandlerResponse::Unhandled;
      if (req.get_header_value("Authorization") == "Bearer " + this->options.api_key)
        return httplib::Server::HandlerResponse::Unhandled;
      send_error(res, 401, "AuthenticationError", "", "a valid API key is required: Authorization: Bearer <key>");
      return httplib::Server::HandlerResponse::Handled;
    });
    server.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
    server.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      send_json(res, 200, models_body(this->model, started));
    });
    server.Post("/v1/chat/completions",
                [this](const httplib::Request& req, httplib::Response& res) { complete(Endpoint::chat, req, res); });
    server.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      complete(Endpoint::completions, req, res);
    });
    server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;  // a handler's own error
      if (const auto route = kRoutes.find(req.path); res.status == 404 && route != kRoutes.end()) {
        res.set_header("Allow", route->second);
        send_error(res, 405, "MethodNotAllowedError", "",
                   fmt::format("{} is not allowed on {}; use {}", req.method, req.path, route->second));
      } else if (res.status == 404)
        send_error(res, 404, "NotFoundError", "",
                   fmt::format("no route {} {}; vinci serve answers /v1/chat/completions, "
                               "/v1/completions, /v1/models and /health",
                               req.method, req.path));
      else if (res.status == 405)
        send_error(res, 405, "BadRequestError", "", fmt::format("{} is not allowed on {}", req.method, req.path));
    });
  }

  void complete(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    std::string outcome;
    try {
      ParsedRequest parsed = parse_request(endpoint, req.body, model);
      if (parsed.stream) {
        const size_t choices = parsed.requests.size();
        stream(std::move(parsed), res);
        spdlog::info("{} {} 200: streaming {} choices", req.method, req.path, choices);
        return;
      }
      const auto results = batcher.generate(parsed.requests);
      for (const auto& r : results)
        if (r.error)
          throw ProtocolError(500, "", fmt::format("generation failed ({}): {}", r.error->kind, r.error->message));
      const ordered_json body = render_response(parsed, results, model, next_id(endpoint), unix_now());
      send_json(res, 200, body);
      outcome =
          fmt::format("{} choices, {} prompt + {} new tokens", results.size(),
                      body["usage"]["prompt_tokens"].get<int64_t>(), body["usage"]["completion_tokens"].get<int64_t>());
    } catch (const ProtocolError& e) {
      send_error(res, e.status(), e.type(), e.param(), e.what());
      outcome = e.what();
    } catch (const Busy& e) {
      res.set_header("Retry-After", "1");
      send_error(res, 503, "ServiceUnavailableError", "", e.what());
      outcome = e.what();
    } catch (const std::invalid_argument& e) {  // what the backbone refuses in a request
      send_error(res, 400, "BadRequestError", "", e.what());
      outcome = e.what();
    } catch (const std::exception& e) {
      send_error(res, 500, "InternalServerError", "", e.what());
      outcome = e.what();
      spdlog::error("{} {}: {}", req.method, req.path, e.what());
    }
    spdlog::info("{} {} {} in {:.2f} s: {}", req.method, req.path, res.status,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), outcome);
  }

  // Answers with server-sent events: a role chunk per choice, text deltas as tokens come, each
  // choice's last delta with its finish reason, the usage when asked, then [DONE]. The generation
  // runs on its own thread through the batcher; this connection's thread writes what it pushes, and
  // a failed write (the client went away) cancels the request's sequences at their next token.
  void stream(ParsedRequest parsed, httplib::Response& res) {
    // A full queue is answered 503 before the stream opens (the generation thread's own refusal,
    // should the queue fill in between, arrives as an error event).
    batcher.check_room(parsed.requests.size());
    auto state = std::make_shared<Stream>();
    const std::string id = next_id(parsed.endpoint);
    const int64_t created = unix_now();
    size_t holdback = 0;
    for (const auto& stop : parsed.requests.front().sampling.stop_strings)
      holdback = std::max(holdback, stop.size() - 1);
    auto sent = std::make_shared<std::vector<std::string>>(parsed.requests.size());
    auto request = std::make_shared<ParsedRequest>(std::move(parsed));
    for (size_t k = 0; k < request->requests.size(); ++k) {
      state->push(stream_chunk(*request, model, id, created, k, "", true, std::nullopt));
      // The request owns this callback, so it holds the request by pointer (a shared_ptr would keep
      // both alive for ever); the generation thread that calls it owns the request meanwhile.
      const ParsedRequest* owner = request.get();
      request->requests[k].on_text = [this, state, sent, owner, k, holdback, id, created](std::string_view text) {
        if (state->gone) return false;
        std::string& mine = (*sent)[k];
        const size_t n = streamable_length(text, holdback);
        if (n > mine.size() && text.substr(0, mine.size()) == mine) {
          state->push(stream_chunk(*owner, model, id, created, k,
                                   std::string(text.substr(mine.size(), n - mine.size())), false, std::nullopt));
          mine.assign(text.substr(0, n));
        }
        return true;
      };
    }
    {
      std::lock_guard lock(streams_mutex);
      ++streams;
    }
    std::thread([this, state, sent, request, id, created] {
      try {
        const auto results = batcher.generate(request->requests);
        for (size_t k = 0; k < results.size(); ++k) {
          const auto& r = results[k];
          if (r.error)
            throw std::runtime_error(fmt::format("generation failed ({}): {}", r.error->kind, r.error->message));
          const std::string& mine = (*sent)[k];
          const std::string rest = r.text.starts_with(mine) ? r.text.substr(mine.size()) : std::string();
          state->push(stream_chunk(*request, model, id, created, k, rest, false, r.finish_reason));
        }
        if (request->include_usage) state->push(stream_usage_chunk(*request, results, model, id, created));
      } catch (const std::exception& e) {
        state->push(error_body(500, "InternalServerError", "", e.what()));
        spdlog::error("stream {}: {}", id, e.what());
      }
      {
        std::lock_guard lock(state->mutex);
        state->finished = true;
        state->ready.notify_one();
      }
      std::lock_guard lock(streams_mutex);
      --streams;
      streams_ended.notify_all();
    }).detach();
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [state](size_t, httplib::DataSink& sink) {
          std::unique_lock lock(state->mutex);
          state->ready.wait(lock, [&] { return !state->events.empty() || state->finished; });
          while (!state->events.empty()) {
            const std::string event = std::move(state->events.front());
            state->events.pop_front();
            lock.unlock();
            if (!sink.write(event.data(), event.size())) {
              state->gone = true;
              return false;
            }
            lock.lock();
          }
          if (state->finished) {
            lock.unlock();
            static const std::string done = "data: [DONE]\n\n";
            sink.write(done.data(), done.size());
            sink.done();
          }
          return true;
        },
        [state](bool) { state->gone = true; });
  }

  ~Impl() {
    // The streams' generation threads use the batcher: they finish before it goes.
    std::unique_lock lock(streams_mutex);
    streams_ended.wait(lock, [this] { return streams == 0; });
  }

  std::string next_id(Endpoint endpoint) {
    std::lock_guard lock(id_mutex);
    return fmt::format("{}-{:016x}{:016x}", endpoint == Endpoint::chat ? "chatcmpl" : "cmpl", ids(), ids());
  }

  ServedModel model;
  ServerOptions options;
  RequestBatcher batcher;
  httplib::Server server;
  int64_t started = unix_now();
  std::mutex id_mutex;
  std::mt19937_64 ids;
  std::mutex streams_mutex;
  std::condition_variable streams_ended;
  size_t streams = 0;
  socket_t listen_socket = INVALID_SOCKET;
};

OpenAiServer::OpenAiServer(llm::Backbone& backbone, ServedModel model, ServerOptions options)
    : impl_(std::make_unique<Impl>(backbone, std::move(model), std::move(options))) {}

OpenAiServer::~OpenAiServer() = default;

std::optional<std::string> exposure_warning(const ServerOptions& options) {
  static const std::set<std::string> loopback = {"127.0.0.1", "localhost", "::1"};
  if (!options.api_key.empty() || loopback.contains(options.host) || options.host.starts_with("127."))
    return std::nullopt;
  return fmt::format(
      "listening on {} without an API key: anyone who reaches this port can use the model; pass --api-key-env, or "
      "--host 127.0.0.1",
      options.host);
}

int OpenAiServer::bind() {
  const auto& o = impl_->options;
  if (const auto warning = exposure_warning(o)) spdlog::warn("{}", *warning);
  const int port =
      o.port == 0 ? impl_->server.bind_to_any_port(o.host) : (impl_->server.bind_to_port(o.host, o.port) ? o.port : -1);
  // Debian's httplib listens with a backlog of 5: a burst of connections (64 idle clients, then
  // /health) overflowed it, and the kernel dropped SYNs that clients retry only after a second.
  if (port > 0 && impl_->listen_socket != INVALID_SOCKET) ::listen(impl_->listen_socket, 1024);
  if (port <= 0)
    throw std::runtime_error(
        fmt::format("cannot listen on {}:{} (taken, or not an address of this machine); pick "
                    "another --port, or 0 for any free one",
                    o.host, o.port));
  return port;
}

void OpenAiServer::run() { impl_->server.listen_after_bind(); }

void OpenAiServer::stop() { impl_->server.stop(); }

}  // namespace vinci::serve
