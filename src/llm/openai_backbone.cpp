#include "llm/openai_backbone.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <semaphore>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/http_client.h"
#include "core/setup_error.h"

namespace vinci::llm {

namespace {

using nlohmann::ordered_json;

// A response that is not the JSON the endpoint promises.
struct Garbled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One HTTP call: n identical requests become one call with "n".
struct Call {
  size_t first = 0;  // index of the first request of the group
  int n = 1;
  bool chat = true;
  ordered_json body;
};

// vLLM's return_tokens_as_token_ids writes each token as "token_id:1234"; other tokens are text.
std::optional<int32_t> token_id_of(const ordered_json& token) {
  constexpr std::string_view prefix = "token_id:";
  if (!token.is_string()) return std::nullopt;
  const std::string s = token.get<std::string>();
  if (s.rfind(prefix, 0) != 0) return std::nullopt;
  return static_cast<int32_t>(std::stol(s.substr(prefix.size())));
}

std::vector<int32_t> int_array(const ordered_json& a, const char* what) {
  if (!a.is_array()) throw Garbled(fmt::format("'{}' is not an array", what));
  std::vector<int32_t> out;
  out.reserve(a.size());
  for (const auto& v : a) {
    if (!v.is_number_integer()) throw Garbled(fmt::format("'{}' holds a non-integer", what));
    out.push_back(v.get<int32_t>());
  }
  return out;
}

ordered_json request_body(const GenerationRequest& r, const OpenAiOptions& o) {
  const SamplingParams& s = r.sampling;
  ordered_json body;
  body["model"] = o.model;
  const bool chat = r.prompt_ids.empty();
  if (chat) {
    body["messages"] = to_json(r.messages);
  } else {
    body["prompt"] = r.prompt_ids;
  }
  body["max_tokens"] = s.max_new_tokens;
  body["temperature"] = s.greedy ? 0.0 : s.temperature;
  if (!s.greedy && s.top_p < 1.0) body["top_p"] = s.top_p;
  if (s.seed) body["seed"] = *s.seed;
  if (!s.stop_strings.empty()) body["stop"] = s.stop_strings;
  body["stream"] = false;
  if (chat) {
    body["logprobs"] = true;
  } else {
    body["logprobs"] = 1;  // the completions endpoint counts alternatives; 1 returns the chosen token's
  }
  ordered_json template_kwargs = ordered_json::object();
  for (const auto& [key, value] : r.chat_extra.items()) {
    if (key == "tools" || key == "tool_choice")
      body[key] = value;
    else
      template_kwargs[key] = value;
  }
  if (o.vllm_extras) {
    if (!s.greedy && s.top_k > 0) body["top_k"] = s.top_k;
    if (!s.stop_token_ids.empty()) body["stop_token_ids"] = s.stop_token_ids;
    if (s.ignore_eos) body["ignore_eos"] = true;
    if (chat && !template_kwargs.empty()) body["chat_template_kwargs"] = template_kwargs;
    body["return_token_ids"] = true;
    body["return_tokens_as_token_ids"] = true;
  }
  return body;
}

FinishReason finish_reason_of(const ordered_json& choice) {
  const auto it = choice.find("finish_reason");
  if (it == choice.end() || !it->is_string()) return FinishReason::stop;
  return *it == "length" ? FinishReason::length : FinishReason::stop;  // stop, tool_calls, eos
}

// The choices of one response, ordered by their index; throws Garbled on a malformed body.
std::vector<GenerationResult> parse_choices(const std::string& text, const Call& call) {
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    throw Garbled(fmt::format("the body is not JSON ({}): {}", e.what(), text.substr(0, 200)));
  }
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array())
    throw Garbled(fmt::format("no 'choices' array in the response: {}", text.substr(0, 200)));
  const auto& choices = j["choices"];
  if (choices.size() != static_cast<size_t>(call.n))
    throw Garbled(fmt::format("asked for {} choices, got {}", call.n, choices.size()));
  std::vector<int32_t> prompt_ids;
  if (j.contains("prompt_token_ids") && !j["prompt_token_ids"].is_null())
    prompt_ids = int_array(j["prompt_token_ids"], "prompt_token_ids");
  std::vector<GenerationResult> out(call.n);
  try {
    for (size_t i = 0; i < choices.size(); ++i) {
      const auto& c = choices[i];
      const size_t index = c.contains("index") ? c["index"].get<size_t>() : i;
      if (index >= out.size()) throw Garbled(fmt::format("choice index {} out of range", index));
      GenerationResult& r = out[index];
      r.finish_reason = finish_reason_of(c);
      r.prompt_ids = prompt_ids;
      if (c.contains("prompt_token_ids") && !c["prompt_token_ids"].is_null())
        r.prompt_ids = int_array(c["prompt_token_ids"], "prompt_token_ids");
      if (call.chat) {
        if (!c.contains("message") || !c["message"].is_object()) throw Garbled("a choice has no 'message'");
        const auto& m = c["message"];
        if (m.contains("content") && m["content"].is_string()) r.text = m["content"].get<std::string>();
        if (m.contains("tool_calls") && m["tool_calls"].is_array()) r.tool_calls = m["tool_calls"];
        for (const char* key : {"reasoning_content", "reasoning"})
          if (m.contains(key) && m[key].is_string()) r.reasoning = m[key].get<std::string>();
      } else {
        if (!c.contains("text") || !c["text"].is_string()) throw Garbled("a choice has no 'text'");
        r.text = c["text"].get<std::string>();
      }
      // Token ids: vLLM's return_token_ids, else the "token_id:N" strings of the logprobs.
      std::vector<int32_t> ids_from_logprobs;
      if (c.contains("logprobs") && c["logprobs"].is_object()) {
        const auto& lp = c["logprobs"];
        if (lp.contains("content") && lp["content"].is_array()) {
          for (const auto& t : lp["content"]) {
            r.logprobs.push_back(t.at("logprob").get<float>());
            if (const auto id = t.contains("token") ? token_id_of(t["token"]) : std::nullopt)
              ids_from_logprobs.push_back(*id);
          }
        } else if (lp.contains("token_logprobs") && lp["token_logprobs"].is_array()) {
          for (const auto& v : lp["token_logprobs"]) r.logprobs.push_back(v.is_number() ? v.get<float>() : 0.0f);
          if (lp.contains("tokens") && lp["tokens"].is_array())
            for (const auto& t : lp["tokens"])
              if (const auto id = token_id_of(t)) ids_from_logprobs.push_back(*id);
        }
      }
      if (c.contains("token_ids") && !c["token_ids"].is_null())
        r.token_ids = int_array(c["token_ids"], "token_ids");
      else if (!ids_from_logprobs.empty() && ids_from_logprobs.size() == r.logprobs.size())
        r.token_ids = ids_from_logprobs;
      r.token_ids_known = !r.token_ids.empty() && !r.prompt_ids.empty();
      if (r.token_ids_known && !r.logprobs.empty() && r.logprobs.size() != r.token_ids.size())
        throw Garbled(fmt::format("{} token ids but {} logprobs", r.token_ids.size(), r.logprobs.size()));
    }
  } catch (const ordered_json::exception& e) {
    throw Garbled(fmt::format("malformed choice ({})", e.what()));
  } catch (const std::invalid_argument& e) {
    throw Garbled(fmt::format("malformed token id ({})", e.what()));
  } catch (const std::out_of_range& e) {
    throw Garbled(fmt::format("token id out of range ({})", e.what()));
  }
  return out;
}

// The server's own words from an error body ({"error": {"message": ...}} or {"detail": ...}).
std::string error_detail(const std::string& body) {
  try {
    const auto j = ordered_json::parse(body);
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
    if (j.contains("detail")) return j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump();
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  } catch (const ordered_json::exception&) {
  }
  return body.substr(0, 300);
}

class OpenAiBackbone final : public Backbone {
 public:
  explicit OpenAiBackbone(OpenAiOptions options)
      : options_(std::move(options)), slots_(std::max(1, options_.max_concurrency)) {
    while (!options_.base_url.empty() && options_.base_url.back() == '/') options_.base_url.pop_back();
    if (!options_.api_key_env.empty())
      if (const char* key = std::getenv(options_.api_key_env.c_str()); key && *key) api_key_ = key;
  }

  std::string model_name() const override { return options_.model; }

  std::vector<GenerationResult> generate(std::span<const GenerationRequest> requests) override {
    std::vector<Call> calls;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].prompt_ids.empty() && requests[i].messages.empty())
        throw std::invalid_argument(fmt::format("request {}: neither prompt ids nor a messages array", i));
      ordered_json body = request_body(requests[i], options_);
      if (!calls.empty() && calls.back().body == body && calls.back().first + calls.back().n == i) {
        ++calls.back().n;
        continue;
      }
      calls.push_back({i, 1, requests[i].prompt_ids.empty(), std::move(body)});
    }
    std::vector<GenerationResult> results(requests.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t c = next++; c < calls.size(); c = next++) {
        auto got = run(calls[c]);
        for (int k = 0; k < calls[c].n; ++k) results[calls[c].first + k] = std::move(got[k]);
      }
    };
    const size_t threads = std::min<size_t>(calls.size(), static_cast<size_t>(std::max(1, options_.max_concurrency)));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    return results;
  }

 private:
  // One call with retries; failures come back as results carrying the error.
  std::vector<GenerationResult> run(const Call& call) {
    core::HttpRequest http;
    http.url = options_.base_url + (call.chat ? "/chat/completions" : "/completions");
    http.headers["Content-Type"] = "application/json";
    if (!api_key_.empty()) http.headers["Authorization"] = "Bearer " + api_key_;
    ordered_json body = call.body;
    if (call.n > 1) body["n"] = call.n;
    http.body = body.dump();
    http.timeout = options_.timeout;
    http.connect_timeout = options_.connect_timeout;

    GenerationError error;
    std::mt19937_64 jitter(std::hash<std::string>{}(http.body));
    for (int attempt = 0;; ++attempt) {
      bool retryable = false;
      {
        slots_.acquire();
        struct Release {
          std::counting_semaphore<>& s;
          ~Release() { s.release(); }
        } release{slots_};
        try {
          const core::HttpResponse response = core::http_send(http);
          if (response.status == 200) return parse_choices(response.body, call);
          const std::string detail = error_detail(response.body);
          error.message = fmt::format("{} answered HTTP {}: {}", http.url, response.status, detail);
          if (response.status == 429) {
            error.kind = "rate_limited";
            retryable = true;
          } else if (response.status >= 500) {
            error.kind = "server_error";
            retryable = true;
          } else if (response.status == 401 || response.status == 403) {
            error.kind = "unauthorized";
            error.message += fmt::format(" (is the key in ${} right?)", options_.api_key_env);
          } else {
            error.kind = "bad_request";
            if (options_.vllm_extras && detail.find("token_id") != std::string::npos)
              error.message += " (a server without vLLM's extras: turn them off with --no-vllm-extras)";
          }
        } catch (const core::HttpError& e) {
          error.kind = core::http_error_kind_name(e.kind());
          error.message = e.what();
          retryable = true;
        } catch (const Garbled& e) {
          error.kind = "garbled";
          error.message = fmt::format("{}: {}", http.url, e.what());
        }
      }
      if (!retryable || attempt >= options_.max_retries) break;
      // Exponential backoff with full jitter, so many clients do not retry in lockstep.
      const std::chrono::milliseconds cap =
          std::min(options_.max_backoff, options_.initial_backoff * (int64_t{1} << std::min(attempt, 20)));
      const auto wait =
          std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(cap.count() / 2, cap.count())(jitter));
      spdlog::warn("{} ({}); retry {} of {} in {} ms", error.message, error.kind, attempt + 1, options_.max_retries,
                   wait.count());
      std::this_thread::sleep_for(wait);
    }
    std::vector<GenerationResult> failed(call.n);
    for (auto& r : failed) {
      r.token_ids_known = false;
      r.error = error;
    }
    return failed;
  }

  OpenAiOptions options_;
  std::string api_key_;
  std::counting_semaphore<> slots_;
};

}  // namespace

std::unique_ptr<Backbone> open_openai_backbone(const OpenAiOptions& options) {
  if (options.base_url.rfind("http://", 0) != 0 && options.base_url.rfind("https://", 0) != 0)
    throw std::invalid_argument(
        fmt::format("--llm '{}': expected a URL such as http://127.0.0.1:8000/v1", options.base_url));
  if (options.model.empty())
    throw std::invalid_argument("--model-name: the served model's name is required with --llm");
  return std::make_unique<OpenAiBackbone>(options);
}

void check_openai_server(const OpenAiOptions& options) {
  std::string base = options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  core::HttpRequest request;
  request.method = "GET";
  request.url = base + "/models";
  request.timeout = options.connect_timeout + std::chrono::seconds(10);
  request.connect_timeout = options.connect_timeout;
  if (!options.api_key_env.empty())
    if (const char* key = std::getenv(options.api_key_env.c_str()); key && *key)
      request.headers["Authorization"] = std::string("Bearer ") + key;
  core::HttpResponse response;
  try {
    response = core::http_send(request);
  } catch (const core::HttpError& e) {
    throw core::SetupError(fmt::format("--llm {}: the server does not answer ({}: {}); start it, or fix the URL",
                                       options.base_url, core::http_error_kind_name(e.kind()), e.what()));
  }
  if (response.status == 401 || response.status == 403)
    throw core::SetupError(fmt::format("--llm {}: the server refused the key (HTTP {}); set ${} to a key it accepts",
                                       options.base_url, response.status, options.api_key_env));
  if (response.status == 404) return;
  if (response.status != 200)
    throw core::SetupError(fmt::format("--llm {}: GET /models answered HTTP {}: {}", options.base_url, response.status,
                                       response.body.substr(0, 200)));
  const auto listing = nlohmann::json::parse(response.body, nullptr, false);
  if (listing.is_discarded() || !listing.contains("data") || !listing["data"].is_array()) return;
  std::vector<std::string> served;
  for (const auto& m : listing["data"])
    if (m.is_object() && m.contains("id") && m["id"].is_string()) served.push_back(m["id"].get<std::string>());
  // Only a warning: some servers (transformers serve) load any model asked for by name.
  if (!served.empty() && std::find(served.begin(), served.end(), options.model) == served.end())
    spdlog::warn("--model-name '{}': the server at {} lists {}", options.model, options.base_url,
                 fmt::join(served, ", "));
}

}  // namespace vinci::llm
