#include "serve/openai_protocol.h"

#include <climits>
#include <set>

#include <fmt/format.h>

#include "text/tokenizer.h"

namespace vinci::serve {

using nlohmann::ordered_json;

ProtocolError::ProtocolError(int status, std::string param, const std::string& message)
    : std::runtime_error(message), status_(status), param_(std::move(param)) {}

const char* ProtocolError::type() const {
  switch (status_) {
    case 404: return "NotFoundError";
    case 400: return "BadRequestError";
    default: return "InternalServerError";
  }
}

namespace {

[[noreturn]] void bad(const std::string& param, const std::string& message) {
  throw ProtocolError(400, param, message);
}

// The body's value of `key` if present and not null, checked to be of the expected JSON type.
const ordered_json* field(const ordered_json& body, const char* key, ordered_json::value_t type, const char* what) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return nullptr;
  const bool ok = type == ordered_json::value_t::number_float     ? it->is_number()
                  : type == ordered_json::value_t::number_integer ? it->is_number_integer()
                                                                  : it->type() == type;
  if (!ok) bad(key, fmt::format("'{}' must be {}, got {}", key, what, it->dump()));
  return &*it;
}

std::optional<double> number(const ordered_json& body, const char* key) {
  const auto* v = field(body, key, ordered_json::value_t::number_float, "a number");
  return v ? std::optional(v->get<double>()) : std::nullopt;
}

std::optional<int64_t> integer(const ordered_json& body, const char* key) {
  const auto* v = field(body, key, ordered_json::value_t::number_integer, "an integer");
  if (!v) return std::nullopt;
  // JSON parses 2**63 and above as unsigned; as int64 they would wrap to negatives.
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    bad(key, fmt::format("'{}' is {}, beyond any range this server accepts", key, v->dump()));
  return v->get<int64_t>();
}

bool flag(const ordered_json& body, const char* key) {
  const auto* v = field(body, key, ordered_json::value_t::boolean, "true or false");
  return v && v->get<bool>();
}

std::vector<int32_t> token_ids(const ordered_json& value, const char* param, int32_t vocab) {
  std::vector<int32_t> ids;
  for (const auto& v : value) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab)
      bad(param, fmt::format("'{}' holds {}, not a token id in [0, {})", param, v.dump(), vocab));
    ids.push_back(v.get<int32_t>());
  }
  return ids;
}

// OpenAI lets content be a list of parts; the templates want text.
ordered_json text_messages(const ordered_json& messages) {
  if (!messages.is_array() || messages.empty())
    bad("messages", "'messages' must be a non-empty array of {role, content}");
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      bad(where, fmt::format("{} must be an object with a string 'role'", where));
    ordered_json copy = m;
    if (m.contains("content") && m["content"].is_array()) {
      std::string text;
      for (const auto& part : m["content"]) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string())
          bad(where + ".content", fmt::format("{}.content: only text parts are served ({})", where, part.dump()));
        text += part["text"].get<std::string>();
      }
      copy["content"] = text;
    } else if (m.contains("content") && !m["content"].is_string() && !m["content"].is_null()) {
      bad(where + ".content", fmt::format("{}.content must be a string or a list of text parts", where));
    }
    out.push_back(std::move(copy));
  }
  return out;
}

// Every field a request may carry: what is served, what is refused unless it asks for the default,
// and what changes nothing here (user, metadata, store, service_tier). Anything else is refused by
// name rather than silently ignored: a client relying on response_format or a new field must learn
// that it was not honoured.
const std::set<std::string>& known_fields(Endpoint endpoint) {
  static const std::set<std::string> common = {"model",
                                               "max_tokens",
                                               "temperature",
                                               "top_p",
                                               "top_k",
                                               "seed",
                                               "stop",
                                               "stop_token_ids",
                                               "n",
                                               "logprobs",
                                               "return_token_ids",
                                               "return_tokens_as_token_ids",
                                               "ignore_eos",
                                               "stream",
                                               "stream_options",
                                               "presence_penalty",
                                               "frequency_penalty",
                                               "repetition_penalty",
                                               "logit_bias",
                                               "user",
                                               "metadata",
                                               "store",
                                               "service_tier"};
  static const std::set<std::string> chat = [] {
    auto s = common;
    s.insert({"messages", "max_completion_tokens", "top_logprobs", "chat_template_kwargs", "tools", "tool_choice",
              "parallel_tool_calls", "response_format"});
    return s;
  }();
  static const std::set<std::string> completions = [] {
    auto s = common;
    s.insert({"prompt", "echo", "best_of", "suffix"});
    return s;
  }();
  return endpoint == Endpoint::chat ? chat : completions;
}

void refuse_unsupported(const ordered_json& body, Endpoint endpoint) {
  for (const auto& [key, value] : body.items())
    if (!known_fields(endpoint).contains(key))
      bad(key, fmt::format("'{}' is not supported by vinci serve; leave it out", key));
  if (const auto* v = field(body, "response_format", ordered_json::value_t::object, "an object");
      v && v->value("type", "") != "text")
    bad("response_format", "'response_format' is not supported (only {\"type\": \"text\"}): no JSON mode or schema");
  if (const auto it = body.find("tool_choice");
      it != body.end() && !it->is_null() && !(it->is_string() && (*it == "auto" || *it == "none")))
    bad("tool_choice", "'tool_choice' is not supported beyond \"auto\" and \"none\": no call is forced");
  if (const auto v = integer(body, "best_of"); v && *v != 1) bad("best_of", "'best_of' is not supported (only 1)");
  if (const auto* v = field(body, "suffix", ordered_json::value_t::string, "a string"); v && !v->empty())
    bad("suffix", "'suffix' is not supported");
  if (flag(body, "stream")) {
    // What a chunk does not carry is refused rather than dropped from the stream.
    if (endpoint == Endpoint::chat ? flag(body, "logprobs") : integer(body, "logprobs").has_value())
      bad("logprobs", "logprobs are not streamed: send stream=false to get them");
    if (flag(body, "return_token_ids")) bad("return_token_ids", "token ids are not streamed: send stream=false");
  } else if (const auto* v = field(body, "stream_options", ordered_json::value_t::object, "an object"); v) {
    bad("stream_options", "'stream_options' is only allowed with stream=true");
  }
  for (const char* key : {"presence_penalty", "frequency_penalty"})
    if (const auto v = number(body, key); v && *v != 0.0) bad(key, fmt::format("'{}' is not supported (only 0)", key));
  if (const auto v = number(body, "repetition_penalty"); v && *v != 1.0)
    bad("repetition_penalty", "'repetition_penalty' is not supported (only 1)");
  if (const auto* v = field(body, "logit_bias", ordered_json::value_t::object, "an object"); v && !v->empty())
    bad("logit_bias", "'logit_bias' is not supported");
  if (endpoint == Endpoint::chat) {
    if (const auto v = integer(body, "top_logprobs"); v && *v > 0)
      bad("top_logprobs", "top_logprobs > 0 is not supported: logprobs=true returns each sampled token's logprob");
  } else {
    if (flag(body, "echo")) bad("echo", "'echo' is not supported");
    if (const auto v = integer(body, "logprobs"); v && (*v < 0 || *v > 1))
      bad("logprobs", "logprobs must be 0 or 1 here: the sampled token's logprob, without alternatives");
  }
}

llm::SamplingParams sampling_of(const ordered_json& body) {
  llm::SamplingParams s;
  if (const auto t = number(body, "temperature")) {
    if (*t < 0) bad("temperature", fmt::format("'temperature' is {}; it must be 0 (greedy) or more", *t));
    s.temperature = *t;
    s.greedy = *t == 0.0;
  }
  if (const auto p = number(body, "top_p")) {
    if (*p <= 0 || *p > 1) bad("top_p", fmt::format("'top_p' is {}; it must be in (0, 1]", *p));
    s.top_p = *p;
  }
  if (const auto k = integer(body, "top_k")) {
    if (*k < -1) bad("top_k", fmt::format("'top_k' is {}; it must be -1 or 0 (no limit) or positive", *k));
    s.top_k = *k < 0 ? 0 : static_cast<int>(*k);
  }
  if (const auto seed = integer(body, "seed")) s.seed = static_cast<uint64_t>(*seed);
  if (const auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) {
      s.stop_strings.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const auto& v : *it) {
        if (!v.is_string() || v.get<std::string>().empty())
          bad("stop", "'stop' must be a string or a list of non-empty strings");
        s.stop_strings.push_back(v.get<std::string>());
      }
    } else {
      bad("stop", "'stop' must be a string or a list of strings");
    }
  }
  s.ignore_eos = flag(body, "ignore_eos");
  return s;
}

}  // namespace

ParsedRequest parse_request(Endpoint endpoint, const std::string& text, const ServedModel& model) {
  ordered_json body;
  try {
    body = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    bad("", fmt::format("the body is not JSON: {}", e.what()));
  }
  if (!body.is_object()) bad("", "the body must be a JSON object");
  if (const auto* name = field(body, "model", ordered_json::value_t::string, "a string"); name && *name != model.name)
    throw ProtocolError(
        404, "model",
        fmt::format("The model `{}` does not exist; this server serves `{}`", name->get<std::string>(), model.name));
  refuse_unsupported(body, endpoint);

  ParsedRequest out;
  out.endpoint = endpoint;
  out.logprobs = endpoint == Endpoint::chat ? flag(body, "logprobs") : integer(body, "logprobs").has_value();
  out.return_token_ids = flag(body, "return_token_ids");
  out.tokens_as_ids = flag(body, "return_tokens_as_token_ids");
  out.stream = flag(body, "stream");
  if (const auto* options = field(body, "stream_options", ordered_json::value_t::object, "an object"))
    out.include_usage = options->contains("include_usage") && flag(*options, "include_usage");
  const int64_t n = integer(body, "n").value_or(1);
  if (n < 1 || n > model.max_n) bad("n", fmt::format("'n' is {}; it must be in [1, {}]", n, model.max_n));

  llm::SamplingParams sampling = sampling_of(body);
  const int32_t vocab = model.vocab_size > 0 ? model.vocab_size : model.tokenizer->vocab_size();
  if (const auto* ids = field(body, "stop_token_ids", ordered_json::value_t::array, "a list of token ids"))
    sampling.stop_token_ids = token_ids(*ids, "stop_token_ids", vocab);

  std::vector<std::vector<int32_t>> prompts;
  if (endpoint == Endpoint::chat) {
    if (!body.contains("messages")) bad("messages", "'messages' is required");
    ordered_json extra = ordered_json::object();
    if (const auto* kwargs = field(body, "chat_template_kwargs", ordered_json::value_t::object, "an object"))
      extra = *kwargs;
    if (const auto* tools = field(body, "tools", ordered_json::value_t::array, "a list of tools"))
      extra["tools"] = *tools;
    const ordered_json messages = text_messages(body["messages"]);
    try {
      prompts.push_back(model.render_chat(messages, extra));
    } catch (const std::exception& e) {
      bad("messages", fmt::format("the chat template refused the messages: {}", e.what()));
    }
  } else {
    const auto it = body.find("prompt");
    if (it == body.end() || it->is_null()) bad("prompt", "'prompt' is required");
    const auto encode = [&](const ordered_json& p) {
      if (p.is_string()) return model.tokenizer->encode(p.get<std::string>(), /*add_special_tokens=*/true);
      if (p.is_array() && !p.empty() && p[0].is_number()) return token_ids(p, "prompt", vocab);
      bad("prompt", "'prompt' must be a string, a list of token ids, or a list of either");
    };
    if (it->is_array() && !it->empty() && (it->at(0).is_string() || it->at(0).is_array())) {
      for (const auto& p : *it) prompts.push_back(encode(p));
    } else {
      prompts.push_back(encode(*it));
    }
  }

  std::optional<int64_t> max_tokens = integer(body, "max_completion_tokens");
  if (!max_tokens) max_tokens = integer(body, "max_tokens");
  for (const auto& prompt : prompts) {
    if (prompt.empty()) bad(endpoint == Endpoint::chat ? "messages" : "prompt", "the prompt is empty");
    const int64_t room = model.max_model_len - static_cast<int64_t>(prompt.size());
    // vLLM's defaults: 16 new tokens on the completions endpoint, the rest of the context on chat.
    const int64_t wanted = max_tokens.value_or(endpoint == Endpoint::chat ? room : 16);
    if (room < 1)
      bad(endpoint == Endpoint::chat ? "messages" : "prompt",
          fmt::format("the prompt has {} tokens, which fills this model's context of {}", prompt.size(),
                      model.max_model_len));
    if (wanted < 1 || wanted > room)
      bad("max_tokens", fmt::format("'max_tokens' is {}; it must be in [1, {}]: the context is {} tokens and the "
                                    "prompt has {}",
                                    wanted, room, model.max_model_len, prompt.size()));
    for (int64_t k = 0; k < n; ++k) {
      llm::GenerationRequest r;
      r.prompt_ids = prompt;
      r.sampling = sampling;
      r.sampling.max_new_tokens = static_cast<int>(wanted);
      // Choices of one request must differ, and a seeded request must be reproducible.
      if (sampling.seed) r.sampling.seed = *sampling.seed + static_cast<uint64_t>(k);
      out.requests.push_back(std::move(r));
    }
  }
  return out;
}

namespace {

// An id past the tokenizer's vocabulary (an embedding padding row) has no text, as in HF's decode.
std::string token_bytes(const ServedModel& model, int32_t id) {
  return id < model.tokenizer->vocab_size() ? model.tokenizer->token_bytes(id) : std::string();
}

std::string token_text(const ServedModel& model, int32_t id, bool as_id) {
  return as_id ? fmt::format("token_id:{}", id) : token_bytes(model, id);
}

ordered_json usage_of(const ParsedRequest& request, const std::vector<llm::GenerationResult>& results) {
  int64_t prompt = 0, completion = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    // n choices of one prompt count its tokens once, as OpenAI does.
    if (i == 0 || request.requests[i].prompt_ids != request.requests[i - 1].prompt_ids)
      prompt += static_cast<int64_t>(request.requests[i].prompt_ids.size());
    completion += static_cast<int64_t>(results[i].token_ids.size());
  }
  return {{"prompt_tokens", prompt}, {"total_tokens", prompt + completion}, {"completion_tokens", completion}};
}

ordered_json stop_reason(const llm::GenerationResult& r) {
  if (r.finish_reason != llm::FinishReason::stop || r.matched_stop.empty()) return nullptr;
  return r.matched_stop;
}

}  // namespace

ordered_json render_response(const ParsedRequest& request, const std::vector<llm::GenerationResult>& results,
                             const ServedModel& model, const std::string& id, int64_t created) {
  const bool chat = request.endpoint == Endpoint::chat;
  ordered_json response = {{"id", id},
                           {"object", chat ? "chat.completion" : "text_completion"},
                           {"created", created},
                           {"model", model.name},
                           {"choices", ordered_json::array()}};
  for (size_t i = 0; i < results.size(); ++i) {
    const llm::GenerationResult& r = results[i];
    ordered_json choice = {{"index", i}};
    ordered_json logprobs = nullptr;
    if (request.logprobs) {
      if (chat) {
        logprobs = {{"content", ordered_json::array()}};
        for (size_t t = 0; t < r.token_ids.size(); ++t) {
          const std::string bytes = token_bytes(model, r.token_ids[t]);
          logprobs["content"].push_back({{"token", token_text(model, r.token_ids[t], request.tokens_as_ids)},
                                         {"logprob", r.logprobs.at(t)},
                                         {"bytes", std::vector<uint8_t>(bytes.begin(), bytes.end())},
                                         {"top_logprobs", ordered_json::array()}});
        }
      } else {
        logprobs = {{"text_offset", ordered_json::array()},
                    {"token_logprobs", r.logprobs},
                    {"tokens", ordered_json::array()},
                    {"top_logprobs", nullptr}};
        size_t offset = 0;
        for (const int32_t t : r.token_ids) {
          logprobs["text_offset"].push_back(offset);
          offset += token_bytes(model, t).size();
          logprobs["tokens"].push_back(token_text(model, t, request.tokens_as_ids));
        }
      }
    }
    if (chat) {
      choice["message"] = {{"role", "assistant"},
                           {"content", r.text},
                           {"reasoning_content", nullptr},
                           {"tool_calls", ordered_json::array()}};
      choice["logprobs"] = logprobs;
    } else {
      choice["text"] = r.text;
      choice["logprobs"] = logprobs;
    }
    choice["finish_reason"] = to_string(r.finish_reason);
    choice["stop_reason"] = stop_reason(r);
    if (request.return_token_ids) {
      if (!chat) choice["prompt_token_ids"] = request.requests[i].prompt_ids;
      choice["token_ids"] = r.token_ids;
    }
    response["choices"].push_back(std::move(choice));
  }
  response["usage"] = usage_of(request, results);
  if (chat && request.return_token_ids) response["prompt_token_ids"] = request.requests.at(0).prompt_ids;
  return response;
}

ordered_json error_body(int status, const std::string& type, const std::string& param, const std::string& message) {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? ordered_json(nullptr) : ordered_json(param)},
            {"code", status}}}};
}

ordered_json models_body(const ServedModel& model, int64_t created) {
  return {{"object", "list"},
          {"data",
           {{{"id", model.name},
             {"object", "model"},
             {"created", created},
             {"owned_by", "vinci"},
             {"root", model.name},
             {"parent", nullptr},
             {"max_model_len", model.max_model_len}}}}};
}

ordered_json stream_chunk(const ParsedRequest& request, const ServedModel& model, const std::string& id,
                          int64_t created, size_t index, const std::string& delta, bool first,
                          std::optional<llm::FinishReason> finish) {
  const bool chat = request.endpoint == Endpoint::chat;
  ordered_json choice = {{"index", index}};
  if (chat) {
    ordered_json d = ordered_json::object();
    if (first) d["role"] = "assistant";
    if (!delta.empty() || (first && !finish)) d["content"] = delta;
    choice["delta"] = d;
    choice["logprobs"] = nullptr;
  } else {
    choice["text"] = delta;
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = finish ? ordered_json(std::string(llm::to_string(*finish))) : ordered_json(nullptr);
  return {{"id", id},
          {"object", chat ? "chat.completion.chunk" : "text_completion"},
          {"created", created},
          {"model", model.name},
          {"choices", ordered_json::array({choice})}};
}

ordered_json stream_usage_chunk(const ParsedRequest& request, const std::vector<llm::GenerationResult>& results,
                                const ServedModel& model, const std::string& id, int64_t created) {
  return {{"id", id},
          {"object", request.endpoint == Endpoint::chat ? "chat.completion.chunk" : "text_completion"},
          {"created", created},
          {"model", model.name},
          {"choices", ordered_json::array()},
          {"usage", usage_of(request, results)}};
}

size_t streamable_length(std::string_view text, size_t holdback) {
  size_t n = text.size() > holdback ? text.size() - holdback : 0;
  size_t start = n;  // the last character's first byte
  while (start > 0 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  if (start > 0) {
    const auto lead = static_cast<unsigned char>(text[start - 1]);
    const size_t width = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (n - (start - 1) < width) n = start - 1;
  }
  // A decoder that replaces an unfinished character with U+FFFD would change it once the rest comes.
  while (n >= 3 && text.substr(n - 3, 3) == "\xEF\xBF\xBD") n -= 3;
  return n;
}

}  // namespace vinci::serve
