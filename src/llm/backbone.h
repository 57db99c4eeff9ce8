// The one model all three agents share. Two implementations sit behind it: the native libtorch
// model (NativeBackbone, which also trains) and an OpenAI-compatible server (OpenAiBackbone).
//
// Rollouts stay token-in, token-out: a result carries the exact ids the model produced and the
// sampler's logprobs, so training never re-tokenizes rendered text (design.md §6).
//
// This header is torch-free (at::Tensor is only declared), so the agents and the CLI compile
// without libtorch's headers; only code that trains needs <ATen/core/Tensor.h>.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include "llm/chat_message.h"

#include <nlohmann/json.hpp>

namespace at {
class Tensor;
}

namespace vinci::text {
class Tokenizer;
}

namespace vinci::llm {

struct SamplingParams {
  // temperature 0 or greedy=true: argmax decoding.
  double temperature = 1.0;
  double top_p = 1.0;
  int top_k = 0;  // 0: no limit
  bool greedy = false;
  int max_new_tokens = 256;
  std::vector<int32_t> stop_token_ids;  // added to the model's own end-of-sequence ids
  std::vector<std::string> stop_strings;
  // A seeded request draws from its own generator, so its output does not depend on which other
  // requests share the batch. Unseeded requests share one generator.
  std::optional<uint64_t> seed;
  bool ignore_eos = false;  // benchmarks: always generate max_new_tokens
};

struct GenerationRequest {
  // Exactly one of prompt_ids and messages. Messages are rendered with the model's chat template and
  // add_generation_prompt (a server gets them in OpenAI's form, llm::to_json).
  std::vector<int32_t> prompt_ids;
  std::vector<ChatMessage> messages;
  // Ordered JSON: a tool schema reaches the template (and tojson) with its keys in the order given.
  nlohmann::ordered_json chat_extra = nlohmann::ordered_json::object();  // enable_thinking, tools...
  SamplingParams sampling;
  // Streaming: called after each new token with the text so far (a matched stop token left out, not
  // yet cut at a stop string; it may end inside a UTF-8 character). Returning false cancels the
  // request (a client that went away): it ends there, with what it has. Backbones that cannot
  // stream (a server) never call it.
  std::function<bool(std::string_view text_so_far)> on_text;
};

enum class FinishReason { stop, length };
std::string_view to_string(FinishReason reason);  // "stop" / "length", as OpenAI names them

// Why a request got no completion, after the backbone's own retries. Agents record it as the
// turn's outcome instead of losing the other requests of the batch.
struct GenerationError {
  // refused, timeout, truncated, transport, rate_limited, server_error, unauthorized,
  // bad_request, garbled
  std::string kind;
  std::string message;
};

struct GenerationResult {
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> token_ids;  // the new tokens, the matched stop token included
  std::string text;                // decoded new tokens, cut before a matched stop string
  // log p(token) under the distribution it was drawn from (temperature, top-k and top-p applied,
  // renormalised), in fp32. Greedy tokens report the untempered model distribution.
  std::vector<float> logprobs;
  FinishReason finish_reason = FinishReason::length;
  std::string matched_stop;  // the stop string or token text that ended it, if any
  // False when a server returned text without token ids: fine for inference, unusable for training.
  bool token_ids_known = true;
  nlohmann::ordered_json tool_calls = nlohmann::ordered_json::array();  // a server's parsed tool calls
  std::string reasoning;  // a server's separated reasoning (vLLM's reasoning_content)
  std::optional<GenerationError> error;
};

// A training sequence: the ids, and which of them are the model's own tokens (loss_mask[i] = 1
// means position i is a target, predicted from positions < i). loss_mask[0] must be 0.
struct TrainSequence {
  std::vector<int32_t> ids;
  std::vector<uint8_t> loss_mask;
};

struct LogprobOptions {
  bool pack = false;               // several sequences per row (block-diagonal attention)
  int64_t max_tokens_per_row = 0;  // packing row length; 0: the longest sequence
  double temperature = 1.0;        // must match the rollout's, so ratios are 1 on-policy
  // When set, receives the entropy (nats) of the tempered distribution at each masked position:
  // detached, float32, in the order of the logprobs.
  at::Tensor* entropy = nullptr;
};

// Where a serving backbone takes its requests from, for iteration-level scheduling (continuous
// batching, as vLLM does it): between two decode steps the backbone admits what has arrived into
// the running batch, and hands each request back the moment it finishes.
class RequestFeed {
 public:
  struct Admitted {
    size_t ticket = 0;                           // the feed's name for the request
    const GenerationRequest* request = nullptr;  // the feed's; alive until completed or failed
  };
  virtual ~RequestFeed() = default;
  // Up to `room` requests to start now. While `idle` (nothing running) it blocks until one arrives
  // or the feed closes; an empty answer while idle ends serve(). Otherwise it answers at once.
  virtual std::vector<Admitted> admit(size_t room, bool idle) = 0;
  virtual void complete(size_t ticket, GenerationResult result) = 0;
  // The request could not be generated (a bad prompt, or the model failed): only its caller learns.
  virtual void fail(size_t ticket, std::exception_ptr error) = 0;
};

struct ServeLimits {
  size_t max_batch = 64;  // requests generated at once
  // Prompt tokens a joining request prefills per step: a longer prompt joins over several steps,
  // between which the running requests go on decoding. 0: whole prompts (an offline batch, where
  // nothing runs that could wait).
  size_t prefill_chunk = 0;
  // Tokens the KV cache may hold, all requests together (0: as many as memory allows). At the
  // limit a request waits to start, and a running one that needs room is preempted: the one that
  // started last gives its blocks back and waits to be prefilled again with what it has generated.
  size_t kv_cache_tokens = 0;
};

// What the agents need: generation, one result per request, in order.
class Backbone {
 public:
  virtual ~Backbone() = default;

  virtual std::vector<GenerationResult> generate(std::span<const GenerationRequest> requests) = 0;
  virtual std::string model_name() const = 0;

  // Serves the feed until it closes. This default runs rounds (a round's generate() ends before the
  // next admits anything), for backbones that cannot add a row mid-flight; a round that throws is
  // retried request by request, so only the bad one fails.
  virtual void serve(RequestFeed& feed, const ServeLimits& limits);
};

// A backbone the trainer can update: the native model.
class TrainableBackbone : public Backbone {
 public:
  // log p(target) at every masked position, concatenated in sequence order: a 1-D float32
  // tensor that carries gradients to the trainable parameters.
  virtual at::Tensor logprobs(std::span<const TrainSequence> sequences, const LogprobOptions& options) = 0;
  virtual std::vector<at::Tensor> trainable_parameters() = 0;

  // HF-compatible checkpoint (or a PEFT adapter when training LoRA); load() restores what save()
  // wrote into this model.
  virtual void save(const std::filesystem::path& dir) const = 0;
  virtual void load(const std::filesystem::path& dir) = 0;

  virtual const text::Tokenizer& tokenizer() const = 0;
  virtual std::vector<int32_t> render_chat(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& extra,
                                           bool add_generation_prompt) const = 0;
};

}  // namespace vinci::llm
