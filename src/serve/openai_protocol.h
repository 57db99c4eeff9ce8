// The OpenAI wire format as `vinci serve` speaks it: requests, responses, errors.
//
// The OpenAI wire format as `vinci serve` speaks it: request bodies of /v1/chat/completions and
// /v1/completions into generation requests, results into response bodies, and errors.
//
// Responses follow vLLM's, field for field, so that clients written for vLLM (vinci's own
// included) get the same token-exact rollouts from vinci serve: `return_token_ids` adds the prompt
// and completion ids, `return_tokens_as_token_ids` writes logprob tokens as "token_id:N".
// Logprobs are those of the distribution each token was drawn from (temperature, top-k and top-p
// applied), what vLLM calls processed logprobs: the ratios training computes need exactly these.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/backbone.h"

namespace vinci::text {
class Tokenizer;
}

namespace vinci::serve {

// A request the server refuses: the HTTP status, OpenAI's error type and the field at fault.
class ProtocolError : public std::runtime_error {
 public:
  ProtocolError(int status, std::string param, const std::string& message);
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const char* type() const;  // BadRequestError, NotFoundError, InternalServerError

 private:
  int status_;
  std::string param_;
};

enum class Endpoint { chat, completions };

// What the protocol needs of the model behind it.
struct ServedModel {
  std::string name;  // what clients pass as "model"
  const text::Tokenizer* tokenizer = nullptr;
  // The chat template applied with add_generation_prompt; extra holds chat_template_kwargs and tools.
  std::function<std::vector<int32_t>(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& extra)>
      render_chat;
  int64_t max_model_len = 0;  // prompt + completion tokens at most
  // The embedding's rows, which may outnumber the tokenizer's ids (padding rows a random or
  // undertrained model can still sample); 0: the tokenizer's vocab_size.
  int32_t vocab_size = 0;
  int max_n = 64;
};

struct ParsedRequest {
  Endpoint endpoint = Endpoint::chat;
  // One per choice: prompts x n, in the order of the response's choice indices. Each carries its
  // prompt as ids, so lengths are checked here and the response can return them.
  std::vector<llm::GenerationRequest> requests;
  bool logprobs = false;
  bool return_token_ids = false;
  bool tokens_as_ids = false;
  bool stream = false;         // server-sent events, one chunk per text delta
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
};

// Throws ProtocolError naming the field at fault.
ParsedRequest parse_request(Endpoint endpoint, const std::string& body, const ServedModel& model);

// The response body for the results of parse_request's requests, in order.
nlohmann::ordered_json render_response(const ParsedRequest& request, const std::vector<llm::GenerationResult>& results,
                                       const ServedModel& model, const std::string& id, int64_t created);

// How much of a streamed choice's text so far can be sent: all but its last `holdback` bytes (the
// longest stop string less one: they could still become a stop string, which the final text cuts)
// and a UTF-8 character whose bytes have not all come (or a U+FFFD a decoder put in its place).
size_t streamable_length(std::string_view text, size_t holdback);

// One server-sent event's body of a stream: choice `index`'s new text (the first chunk of a chat
// choice carries the assistant role), and its finish reason on the last.
nlohmann::ordered_json stream_chunk(const ParsedRequest& request, const ServedModel& model, const std::string& id,
                                    int64_t created, size_t index, const std::string& delta, bool first,
                                    std::optional<llm::FinishReason> finish);
// The stream's last chunk when include_usage: no choices, the request's usage.
nlohmann::ordered_json stream_usage_chunk(const ParsedRequest& request,
                                          const std::vector<llm::GenerationResult>& results, const ServedModel& model,
                                          const std::string& id, int64_t created);

nlohmann::ordered_json error_body(int status, const std::string& type, const std::string& param,
                                  const std::string& message);
nlohmann::ordered_json models_body(const ServedModel& model, int64_t created);

}  // namespace vinci::serve
