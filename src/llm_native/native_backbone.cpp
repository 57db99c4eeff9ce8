#include "llm_native/native_backbone.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm/model_config.h"
#include "llm/safetensors.h"
#include "llm_native/cuda_graph.h"
#include "llm_native/sampler.h"
#include "llm_native/transformer.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace vinci::llm {

namespace {
constexpr std::size_t kSavePretrainedDefault = 5'000'000'000;  // transformers' save_pretrained
constexpr const char* kShardLimitKey = "vinci_max_shard_bytes";
}  // namespace

namespace {

namespace fs = std::filesystem;

at::Device resolve_device(const std::string& name) {
  if (name == "auto") return at::hasCUDA() ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  at::Device device(name);  // throws c10::Error with the accepted spellings
  if (device.is_cuda() && !at::hasCUDA())
    throw std::runtime_error(fmt::format("--device {}: this machine has no CUDA device (use cpu)", name));
  if (device.is_cuda() && !device.has_index()) device.set_index(0);
  return device;
}

at::ScalarType resolve_dtype(const std::string& name, at::Device device) {
  if (name == "auto") return device.is_cuda() ? at::kBFloat16 : at::kFloat;
  if (name == "float32" || name == "fp32") return at::kFloat;
  if (name == "bfloat16" || name == "bf16") return at::kBFloat16;
  if (name == "float16" || name == "fp16") return at::kHalf;
  if (name == "float64") return at::kDouble;  // for finite-difference gradient checks
  throw std::runtime_error(fmt::format("dtype '{}' is not one of auto, float32, bfloat16, float16, float64", name));
}

DType file_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return DType::f32;
    case at::kBFloat16: return DType::bf16;
    case at::kHalf: return DType::f16;
    case at::kDouble: return DType::f64;
    default: throw std::logic_error("unexpected parameter dtype");
  }
}

const char* hf_dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "float32";
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    case at::kDouble: return "float64";
    default: throw std::logic_error("unexpected parameter dtype");
  }
}

// Tensors moved to the CPU and made contiguous, kept alive while their bytes are written.
struct HostTensors {
  std::vector<at::Tensor> keep;
  std::vector<TensorToWrite> views;

  void add(const std::string& name, const at::Tensor& tensor) {
    auto host = tensor.detach().to(at::kCPU).contiguous();
    keep.push_back(host);
    views.push_back({name, file_dtype(host.scalar_type()), host.sizes().vec(), host.data_ptr(),
                     static_cast<size_t>(host.nbytes())});
  }
};

// Model-side files a saved checkpoint carries along so it loads on its own.
constexpr const char* kCompanionFiles[] = {"generation_config.json",
                                           "tokenizer.json",
                                           "tokenizer_config.json",
                                           "special_tokens_map.json",
                                           "chat_template.jinja",
                                           "vocab.json",
                                           "merges.txt"};

// One request in flight: what it has produced, and when it must stop.
struct Sequence {
  size_t ticket = 0;
  const GenerationRequest* request = nullptr;
  std::vector<int32_t> prompt;
  const SamplingParams* params = nullptr;
  int max_new_tokens = 0;  // the request's, cut to the room the model's context leaves
  std::optional<at::Generator> generator;
  std::vector<int32_t> stop_ids;
  std::string raw_text;  // token bytes so far, for stop strings (may end inside a UTF-8 sequence)
  GenerationResult result;
  std::optional<size_t> stop_string_at;
  bool done = false;

  int64_t position() const { return static_cast<int64_t>(prompt.size() + result.token_ids.size()) - 1; }
  // What a prefill must put in the cache: the prompt, or for a preempted request the prompt and
  // every token it has generated (its last token's logits then give the next one).
  std::vector<int32_t> pending;
  int64_t prefilled = 0;  // tokens of pending already in the cache
  // The tokens its text is made of: a matched stop token is not (a stop string is cut from the text).
  std::span<const int32_t> text_ids() const {
    const std::span<const int32_t> ids(result.token_ids);
    return result.finish_reason == FinishReason::stop && !stop_string_at ? ids.first(ids.size() - 1) : ids;
  }
};

class NativeBackbone final : public TrainableBackbone {
 public:
  NativeBackbone(fs::path dir, ModelConfig config, Transformer model, std::optional<text::Tokenizer> tokenizer,
                 std::optional<text::ChatTemplate> chat, std::string no_chat_reason, std::size_t max_shard_bytes,
                 bool cuda_graphs, bool bucketed_decode, bool keep_decode_state)
      : dir_(std::move(dir)),
        config_(std::move(config)),
        model_(std::move(model)),
        tokenizer_(std::move(tokenizer)),
        chat_(std::move(chat)),
        no_chat_reason_(std::move(no_chat_reason)),
        max_shard_bytes_(max_shard_bytes),
        // Unseeded requests draw from a generator seeded afresh each start, as other samplers do: a
        // restart must not replay the same samples. A request's own seed makes it reproducible.
        shared_generator_(make_generator(model_.options().device, std::random_device{}())),
        use_graphs_(cuda_graphs && model_.options().device.is_cuda() && CapturedStep::available()),
        bucketed_(use_graphs_ || bucketed_decode),
        keep_decode_state_(use_graphs_ && keep_decode_state) {}

  std::vector<GenerationResult> generate(std::span<const GenerationRequest> requests) override;
  void serve(RequestFeed& feed, const ServeLimits& limits) override;
  std::string model_name() const override {
    return (dir_.has_filename() ? dir_ : dir_.parent_path()).filename().string();
  }
  at::Tensor logprobs(std::span<const TrainSequence> sequences, const LogprobOptions& options) override;
  std::vector<at::Tensor> trainable_parameters() override { return model_.trainable_parameters(); }
  void save(const fs::path& dir) const override;
  void load(const fs::path& dir) override;

  const text::Tokenizer& tokenizer() const override {
    if (!tokenizer_)
      throw std::runtime_error(fmt::format("{}: no tokenizer.json; this backbone takes token ids only", dir_.string()));
    return *tokenizer_;
  }

  std::vector<int32_t> render_chat(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& extra,
                                   bool add_generation_prompt) const override {
    if (!chat_)
      throw std::runtime_error(fmt::format("{}: no usable chat template ({}); pass one with --chat-template FILE",
                                           dir_.string(), no_chat_reason_));
    text::ChatOptions options;
    options.add_generation_prompt = add_generation_prompt;
    options.extra = extra;
    return tokenizer().encode(chat_->render(messages, options), /*add_special_tokens=*/false);
  }

 private:
  std::vector<int32_t> prompt_of(const GenerationRequest& request) const;
  Sequence start_sequence(const RequestFeed::Admitted& admitted) const;  // throws on a bad request
  // The next chunk (0: all) of every joining prompt; completed gets the rows whose prompt is now
  // whole, and the result their first tokens' logits, in that order.
  at::Tensor prefill_step(std::span<Sequence> joining, size_t chunk, PagedKvCache& cache,
                          std::vector<size_t>& completed) const;
  // One step of rows whose blocks hold their positions; the next logits.
  at::Tensor decode(std::span<const Sequence> running, PagedKvCache& cache);
  // A step in a graph's shapes, replayed from the graph where there is one.
  at::Tensor decode_bucketed(const std::vector<int64_t>& ids, const std::vector<int64_t>& positions,
                             const std::vector<uint64_t>& rows, int64_t kv_length, PagedKvCache& cache);
  // Samples one token for every row, hands the finished ones back and frees their blocks.
  void sample_step(const at::Tensor& logits, std::vector<Sequence>& active, RequestFeed& feed, PagedKvCache& cache);
  GenerationResult finish(Sequence& seq) const;  // the result, its text cut at the stop
  bool finished(Sequence& seq) const;            // also sets the finish reason
  // Checkpoints pad the embedding matrix past the tokenizer (Qwen: 151936 rows for 151665
  // tokens), so a sampled id may have no text; it decodes to nothing, as in transformers.
  std::string bytes_of(int32_t id) const { return id < tokenizer_->vocab_size() ? tokenizer_->token_bytes(id) : ""; }
  std::string text_of(std::span<const int32_t> ids) const;

  fs::path dir_;
  ModelConfig config_;
  Transformer model_;
  std::optional<text::Tokenizer> tokenizer_;
  std::optional<text::ChatTemplate> chat_;
  std::string no_chat_reason_;
  std::size_t max_shard_bytes_;
  at::Generator shared_generator_;
  // Decode steps from a CUDA graph (cuda_graph.h): on a GPU, up to kGraphMaxRows rows, where a step
  // is bound by kernel launches; larger batches are bound by their bytes and run eagerly. One graph
  // per bucket of rows (a power of two, padded with scratch rows) and of positions attended to (a
  // multiple of kGraphSpanStep), so rows joining and leaving reuse the graphs already made. Spans
  // go up in steps rather than doubling because each step gathers its whole span of keys.
  static constexpr int64_t kGraphMaxRows = 16;
  static constexpr int64_t kGraphSpanStep = 256;
  bool use_graphs_ = false;
  bool bucketed_ = false;  // small batches decode in the graphs' shapes (with graphs or without)
  struct DecodeGraph {
    at::Tensor ids, positions, block_table;  // its inputs, refilled before each replay
    std::unique_ptr<CapturedStep> step;
  };
  // By (rows, span) bucket, for the cache of the serve() call in progress and its pool's size.
  std::map<std::pair<int64_t, int64_t>, DecodeGraph> graphs_;
  int64_t graphs_pool_tokens_ = 0;
  // An inference-only backbone keeps its KV pool, and so its decode graphs, from one serve() call to
  // the next: every generate() call captured its graphs again (two for a 256-token answer to a
  // 512-token prompt). A trainable one frees the pool when a call ends, for training's memory. A call
  // that finds the pool still holding tokens (one that threw) or with another limit starts anew.
  bool keep_decode_state_ = false;
  std::optional<PagedKvCache> kept_cache_;
  int64_t kept_cache_cap_ = 0;
};

std::vector<int32_t> NativeBackbone::prompt_of(const GenerationRequest& request) const {
  const bool has_messages = !request.messages.empty();
  if (has_messages == !request.prompt_ids.empty())
    throw std::invalid_argument("a generation request needs exactly one of prompt_ids and messages");
  auto ids = has_messages ? render_chat(to_json(request.messages), request.chat_extra, true) : request.prompt_ids;
  if (ids.empty()) throw std::invalid_argument("a generation request has an empty prompt");
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw std::invalid_argument(
          fmt::format("prompt token id {} is outside the model's vocabulary [0, {})", id, config_.vocab_size));
  return ids;
}

bool NativeBackbone::finished(Sequence& seq) const {
  const int32_t token = seq.result.token_ids.back();
  if (std::find(seq.stop_ids.begin(), seq.stop_ids.end(), token) != seq.stop_ids.end()) {
    seq.result.finish_reason = FinishReason::stop;
    seq.result.matched_stop = tokenizer_ ? bytes_of(token) : std::to_string(token);
    return true;
  }
  if (tokenizer_ && !seq.params->stop_strings.empty()) {
    // A new match must end inside the newest token, so it starts at most longest-1 bytes earlier.
    size_t longest = 0;
    for (const auto& s : seq.params->stop_strings) longest = std::max(longest, s.size());
    const size_t from = seq.raw_text.size() >= longest ? seq.raw_text.size() - (longest - 1) : 0;
    seq.raw_text += bytes_of(token);
    for (const auto& s : seq.params->stop_strings) {
      const size_t at = s.empty() ? std::string::npos : seq.raw_text.find(s, from);
      if (at != std::string::npos) {
        seq.result.finish_reason = FinishReason::stop;
        seq.result.matched_stop = s;
        seq.stop_string_at = at;
        return true;
      }
    }
  }
  seq.result.finish_reason = FinishReason::length;
  return static_cast<int>(seq.result.token_ids.size()) >= seq.max_new_tokens;
}

std::string NativeBackbone::text_of(std::span<const int32_t> ids) const {
  std::vector<int32_t> known;
  for (int32_t id : ids)
    if (id < tokenizer_->vocab_size()) known.push_back(id);
  return tokenizer_->decode(known);
}

Sequence NativeBackbone::start_sequence(const RequestFeed::Admitted& admitted) const {
  const GenerationRequest& request = *admitted.request;
  Sequence seq;
  seq.ticket = admitted.ticket;
  seq.request = &request;
  seq.prompt = prompt_of(request);
  seq.params = &request.sampling;
  if (seq.params->max_new_tokens < 1) throw std::invalid_argument("max_new_tokens must be at least 1");
  // The cache holds prompt + new tokens, sized by the request: new tokens stop where the context
  // ends ("length"), so 10^8 asked are not 10^8 allocated. A prompt already past the context (the
  // agents' long prompts on a small model) still continues, as transformers' generate does, for at
  // most a context's worth of tokens.
  const int64_t context = config_.max_position_embeddings;
  const int64_t room = context - static_cast<int64_t>(seq.prompt.size());
  seq.max_new_tokens = context > 0
                           ? static_cast<int>(std::min<int64_t>(seq.params->max_new_tokens, room >= 1 ? room : context))
                           : seq.params->max_new_tokens;
  if (seq.params->seed) seq.generator = make_generator(model_.options().device, *seq.params->seed);
  if (!seq.params->ignore_eos) seq.stop_ids = config_.eos_token_ids;
  seq.stop_ids.insert(seq.stop_ids.end(), seq.params->stop_token_ids.begin(), seq.params->stop_token_ids.end());
  seq.result.prompt_ids = seq.prompt;
  seq.pending = seq.prompt;
  return seq;
}

at::Tensor NativeBackbone::prefill_step(std::span<Sequence> joining, size_t chunk, PagedKvCache& cache,
                                        std::vector<size_t>& completed) const {
  // Each joining prompt's next chunk, right-padded into one batch. A batch that starts every
  // prompt at position 0 is plain causal attention; a later chunk attends to the positions before
  // it too. Padding writes only past its row's chunk: into the row's own last block, which its own
  // tokens overwrite before anyone reads them, or into the scratch block.
  const auto device = model_.options().device;
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  const auto batch = static_cast<int64_t>(joining.size());
  std::vector<int64_t> take(batch);
  int64_t width = 0, span = 0;
  bool from_start = true;
  for (int64_t b = 0; b < batch; ++b) {
    const auto& seq = joining[b];
    const int64_t left = static_cast<int64_t>(seq.pending.size()) - seq.prefilled;
    take[b] = chunk > 0 ? std::min<int64_t>(left, static_cast<int64_t>(chunk)) : left;
    width = std::max(width, take[b]);
    from_start = from_start && seq.prefilled == 0;
  }
  std::vector<int64_t> ids(batch * width, 0), positions(batch * width), last;
  std::vector<uint64_t> rows;
  for (int64_t b = 0; b < batch; ++b) {
    auto& seq = joining[b];
    rows.push_back(seq.ticket);
    std::copy_n(seq.pending.begin() + seq.prefilled, take[b], ids.begin() + b * width);
    for (int64_t t = 0; t < width; ++t) positions[b * width + t] = seq.prefilled + t;
    span = std::max(span, seq.prefilled + width);
    seq.prefilled += take[b];
    if (seq.prefilled == static_cast<int64_t>(seq.pending.size())) {
      completed.push_back(static_cast<size_t>(b));
      last.push_back(b * width + take[b] - 1);
    }
  }
  AttentionSpec spec;
  if (!from_start) {
    spec.kind = AttentionSpec::Kind::kDecode;
    spec.kv_length = span;
  }
  spec.block_table = cache.block_table(rows, cache.blocks_for(span)).to(device);
  auto hidden = model_.hidden(at::tensor(ids, long_options).view({batch, width}).to(device),
                              at::tensor(positions, long_options).view({batch, width}).to(device), spec, &cache);
  if (last.empty()) return {};
  return model_.logits(hidden.reshape({batch * width, -1}).index_select(0, at::tensor(last, long_options).to(device)));
}

at::Tensor NativeBackbone::decode(std::span<const Sequence> running, PagedKvCache& cache) {
  const auto device = model_.options().device;
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  std::vector<int64_t> next(running.size()), pos(running.size());
  std::vector<uint64_t> rows(running.size());
  for (size_t b = 0; b < running.size(); ++b) {
    next[b] = running[b].result.token_ids.back();
    pos[b] = running[b].position();
    rows[b] = running[b].ticket;
  }
  const auto batch = static_cast<int64_t>(running.size());
  const int64_t kv_length = *std::max_element(pos.begin(), pos.end()) + 1;
  if (bucketed_ && batch <= kGraphMaxRows) return decode_bucketed(next, pos, rows, kv_length, cache);
  AttentionSpec spec;
  spec.kind = AttentionSpec::Kind::kDecode;
  spec.kv_length = kv_length;
  spec.block_table = cache.block_table(rows, cache.blocks_for(kv_length)).to(device);
  auto hidden = model_.hidden(at::tensor(next, long_options).view({batch, 1}).to(device),
                              at::tensor(pos, long_options).view({batch, 1}).to(device), spec, &cache);
  return model_.logits(hidden.view({batch, -1}));
}

at::Tensor NativeBackbone::decode_bucketed(const std::vector<int64_t>& ids, const std::vector<int64_t>& positions,
                                           const std::vector<uint64_t>& rows, int64_t kv_length, PagedKvCache& cache) {
  // The step attends to its whole span under the mask, so that its shapes do not change from step
  // to step; padding rows write and read scratch. A graph holds the addresses it was captured
  // with: the pool's, which stay until the pool grows, and its inputs', refilled before each replay.
  const auto batch = static_cast<int64_t>(rows.size());
  int64_t padded = 1;
  while (padded < batch) padded *= 2;
  const int64_t span = (kv_length + kGraphSpanStep - 1) / kGraphSpanStep * kGraphSpanStep;
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  std::vector<int64_t> ids_in(ids), positions_in(positions);
  ids_in.resize(padded, 0);
  positions_in.resize(padded, 0);
  std::vector<uint64_t> table_rows(rows);
  table_rows.resize(padded, ~uint64_t{0});  // no such sequence: all scratch
  const at::Tensor ids_host = at::tensor(ids_in, long_options).view({padded, 1});
  const at::Tensor positions_host = at::tensor(positions_in, long_options).view({padded, 1});
  const at::Tensor table_host = cache.block_table(table_rows, cache.blocks_for(span));
  const auto device = model_.options().device;
  AttentionSpec spec;
  spec.kind = AttentionSpec::Kind::kDecode;
  spec.kv_length = span;
  const auto step = [&](const at::Tensor& step_ids, const at::Tensor& step_positions, const at::Tensor& table) {
    spec.block_table = table;
    return model_.logits(model_.hidden(step_ids, step_positions, spec, &cache).view({padded, -1}));
  };
  if (!use_graphs_)
    return step(ids_host.to(device), positions_host.to(device), table_host.to(device)).narrow(0, 0, batch);
  if (graphs_pool_tokens_ != cache.pool_tokens()) {  // the pool grew: new tensors
    graphs_.clear();
    graphs_pool_tokens_ = cache.pool_tokens();
  }
  const auto found = graphs_.find({padded, span});
  if (found == graphs_.end()) {
    DecodeGraph g;
    g.ids = ids_host.to(device);
    g.positions = positions_host.to(device);
    g.block_table = table_host.to(device);
    at::Tensor first;
    g.step = CapturedStep::capture([&] { return step(g.ids, g.positions, g.block_table); }, first,
                                   graphs_.empty() ? nullptr : graphs_.begin()->second.step.get());
    graphs_.emplace(std::pair{padded, span}, std::move(g));
    return first.narrow(0, 0, batch);
  }
  auto& g = found->second;
  g.ids.copy_(ids_host, /*non_blocking=*/true);
  g.positions.copy_(positions_host, /*non_blocking=*/true);
  g.block_table.copy_(table_host, /*non_blocking=*/true);
  return g.step->replay().narrow(0, 0, batch);
}

GenerationResult NativeBackbone::finish(Sequence& seq) const {
  auto& result = seq.result;
  if (tokenizer_) {
    result.text = text_of(seq.text_ids());
    if (seq.stop_string_at) {
      const size_t cut = result.text.find(result.matched_stop);
      if (cut != std::string::npos) result.text.resize(cut);
    }
  }
  return std::move(result);
}

// Iteration-level scheduling: each pass admits what has arrived, starts what the KV cache has room
// for, runs one decode step for the rows already running, prefills the next chunk of every joining
// prompt, samples every row that has a next token (the running ones and the prompts just
// completed), and hands back the rows that finished, whose blocks go back to the pool at once. A
// row's tokens do not depend on which others share its steps: attention is per row, and a seeded
// request draws from its own generator.
void NativeBackbone::serve(RequestFeed& feed, const ServeLimits& limits) {
  c10::InferenceMode inference;
  const size_t max_batch = std::max<size_t>(1, limits.max_batch);
  const auto cap = static_cast<int64_t>(limits.kv_cache_tokens);
  if (!kept_cache_ || kept_cache_cap_ != cap || kept_cache_->reserved_tokens() != 0) {
    graphs_.clear();  // captured on another cache
    kept_cache_.reset();
    kept_cache_.emplace(model_.cache_shape(), PagedKvCache::kDefaultBlockTokens, cap > 0 ? cap : 256, cap);
    kept_cache_cap_ = cap;
  }
  PagedKvCache& cache = *kept_cache_;
  // A trainable backbone gives the pool back whichever way the call ends: training needs the memory.
  struct FreeUnlessKept {
    NativeBackbone& backbone;
    ~FreeUnlessKept() {
      if (backbone.keep_decode_state_) return;
      backbone.graphs_.clear();
      backbone.kept_cache_.reset();
    }
  } free_unless_kept{*this};
  std::vector<Sequence> running, joining;
  std::deque<Sequence> waiting;  // admitted, not started: no room in the cache yet, or preempted
  const auto too_long = [&](int64_t tokens) {
    return std::make_exception_ptr(std::invalid_argument(
        fmt::format("the request needs {} KV cache tokens and the cache holds {} (--kv-cache-tokens)", tokens, cap)));
  };
  const auto fail_all = [&](auto& rows, std::exception_ptr error) {
    for (auto& seq : rows) {
      cache.release(seq.ticket);
      feed.fail(seq.ticket, error);
    }
    rows.clear();
  };
  for (;;) {
    const size_t busy = running.size() + joining.size() + waiting.size();
    if (busy < max_batch) {
      const auto admitted = feed.admit(max_batch - busy, /*idle=*/busy == 0);
      if (admitted.empty() && busy == 0) return;
      for (const auto& a : admitted) {
        try {
          waiting.push_back(start_sequence(a));
        } catch (...) {
          feed.fail(a.ticket, std::current_exception());  // a bad prompt fails its own caller only
        }
      }
    }
    // Requests start in arrival order as the cache has room for their prompts; one that would not
    // fit an empty cache never will, and fails at once rather than after the others have finished.
    while (!waiting.empty()) {
      auto& seq = waiting.front();
      const auto tokens = static_cast<int64_t>(seq.pending.size());
      try {
        if (!cache.fits_alone(tokens)) {
          feed.fail(seq.ticket, too_long(tokens));
        } else if (!cache.reserve(seq.ticket, tokens)) {
          if (!running.empty() || !joining.empty()) break;
          feed.fail(seq.ticket, too_long(tokens));  // an empty cache that cannot take it after all
        } else {
          joining.push_back(std::move(seq));
        }
      } catch (...) {
        feed.fail(seq.ticket, std::current_exception());  // the pool could not grow for it
      }
      waiting.pop_front();
    }
    if (running.empty() && joining.empty()) continue;
    try {
      // Each running row needs a slot for its next position; without room, the row that started
      // last is preempted until the others fit (alone, a row that does not fit fails).
      for (size_t r = 0; r < running.size();) {
        if (cache.reserve(running[r].ticket, running[r].position() + 1)) {
          ++r;
          continue;
        }
        Sequence preempted = std::move(running.back());
        running.pop_back();
        cache.release(preempted.ticket);
        if (running.empty() && joining.empty()) {
          feed.fail(preempted.ticket, too_long(preempted.position() + 1));
          break;
        }
        // Recompute costs a prefill of everything the row had; a log that shows many asks for a
        // larger --kv-cache-tokens.
        spdlog::info(
            "the KV cache is full ({} tokens, --kv-cache-tokens): a request {} tokens in waits and is "
            "recomputed later",
            cap, preempted.position());
        preempted.pending = preempted.prompt;
        preempted.pending.insert(preempted.pending.end(), preempted.result.token_ids.begin(),
                                 preempted.result.token_ids.end());
        preempted.prefilled = 0;
        waiting.push_front(std::move(preempted));
      }
      at::Tensor logits;
      if (!running.empty()) logits = decode(running, cache);
      if (!joining.empty()) {
        std::vector<size_t> completed;
        const at::Tensor first = prefill_step(joining, limits.prefill_chunk, cache, completed);
        if (!completed.empty()) {
          // The completed prompts join the running rows and get their first token below.
          logits = logits.defined() ? at::cat({logits, first}) : first;
          std::vector<Sequence> still;
          for (size_t b = 0, c = 0; b < joining.size(); ++b) {
            if (c < completed.size() && completed[c] == b) {
              running.push_back(std::move(joining[b]));
              ++c;
            } else {
              still.push_back(std::move(joining[b]));
            }
          }
          joining = std::move(still);
        }
      }
      if (logits.defined()) sample_step(logits, running, feed, cache);
    } catch (...) {
      // The model itself failed (out of memory, a device error): every row in flight fails with it,
      // and the server goes on with what arrives next.
      const auto error = std::current_exception();
      fail_all(running, error);
      fail_all(joining, error);
    }
  }
}

void NativeBackbone::sample_step(const at::Tensor& logits, std::vector<Sequence>& active, RequestFeed& feed,
                                 PagedKvCache& cache) {
  std::vector<const SamplingParams*> params;
  std::vector<at::Generator*> generators;
  for (auto& seq : active) {
    params.push_back(seq.params);
    generators.push_back(seq.generator ? &*seq.generator : nullptr);
  }
  auto sampled = sample(logits, params, generators, shared_generator_);
  bool any_done = false;
  for (size_t b = 0; b < active.size(); ++b) {
    auto& seq = active[b];
    seq.result.token_ids.push_back(sampled.ids[b]);
    seq.result.logprobs.push_back(sampled.logprobs[b]);
    seq.done = finished(seq);
    if (const auto& on_text = seq.request->on_text; on_text && tokenizer_) {
      if (!on_text(text_of(seq.text_ids()))) seq.done = true;  // cancelled: it ends with what it has
    }
    any_done = any_done || seq.done;
  }
  if (!any_done) return;
  std::vector<Sequence> still;
  for (auto& seq : active) {
    if (!seq.done) {
      still.push_back(std::move(seq));
      continue;
    }
    cache.release(seq.ticket);
    feed.complete(seq.ticket, finish(seq));
  }
  active = std::move(still);
}

// generate() as a feed: every request admitted at once, each result put back in its place.
class SpanFeed final : public RequestFeed {
 public:
  explicit SpanFeed(std::span<const GenerationRequest> requests) : requests_(requests), results_(requests.size()) {}
  std::vector<Admitted> admit(size_t, bool) override {
    std::vector<Admitted> out;
    if (admitted_) return out;
    admitted_ = true;
    for (size_t i = 0; i < requests_.size(); ++i) out.push_back({i, &requests_[i]});
    return out;
  }
  void complete(size_t ticket, GenerationResult result) override { results_[ticket] = std::move(result); }
  void fail(size_t, std::exception_ptr error) override {
    if (!error_) error_ = error;
  }
  std::vector<GenerationResult> take() {
    if (error_) std::rethrow_exception(error_);
    return std::move(results_);
  }

 private:
  std::span<const GenerationRequest> requests_;
  std::vector<GenerationResult> results_;
  std::exception_ptr error_;
  bool admitted_ = false;
};

std::vector<GenerationResult> NativeBackbone::generate(std::span<const GenerationRequest> requests) {
  // Every prompt is checked before any is generated: a bad one fails the call at once.
  for (const auto& r : requests) {
    prompt_of(r);
    if (r.sampling.max_new_tokens < 1) throw std::invalid_argument("max_new_tokens must be at least 1");
  }
  SpanFeed feed(requests);
  ServeLimits limits;
  limits.max_batch = std::max<size_t>(1, requests.size());
  serve(feed, limits);
  return feed.take();
}

at::Tensor NativeBackbone::logprobs(std::span<const TrainSequence> sequences, const LogprobOptions& options) {
  const auto device = model_.options().device;
  const auto long_options = at::TensorOptions().dtype(at::kLong);
  if (sequences.empty()) throw std::invalid_argument("logprobs() needs at least one sequence");
  int64_t longest = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const auto& s = sequences[i];
    if (s.ids.size() != s.loss_mask.size() || s.ids.empty())
      throw std::invalid_argument(
          fmt::format("sequence {}: {} ids but {} mask entries", i, s.ids.size(), s.loss_mask.size()));
    if (s.loss_mask[0])
      throw std::invalid_argument(fmt::format("sequence {}: position 0 has no preceding token to predict it from", i));
    longest = std::max<int64_t>(longest, s.ids.size());
  }
  // Rows of the batch: one sequence each, or packed first-fit in order.
  const int64_t row_length = options.pack ? std::max(longest, options.max_tokens_per_row) : longest;
  std::vector<std::vector<size_t>> rows;
  std::vector<int64_t> fill;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const auto len = static_cast<int64_t>(sequences[i].ids.size());
    if (options.pack && !rows.empty() && fill.back() + len <= row_length) {
      rows.back().push_back(i);
      fill.back() += len;
    } else {
      rows.push_back({i});
      fill.push_back(len);
    }
  }
  const auto batch = static_cast<int64_t>(rows.size());
  std::vector<int64_t> ids(batch * row_length, 0), pos(batch * row_length, 0), spans;
  std::vector<int64_t> source, target;  // flat index of the predicting position, and the predicted id
  for (int64_t r = 0; r < batch; ++r) {
    int64_t offset = r * row_length;
    for (size_t i : rows[r]) {
      const auto& s = sequences[i];
      for (size_t t = 0; t < s.ids.size(); ++t) {
        ids[offset + t] = s.ids[t];
        pos[offset + t] = static_cast<int64_t>(t);
        if (s.loss_mask[t]) {
          source.push_back(offset + static_cast<int64_t>(t) - 1);
          target.push_back(s.ids[t]);
        }
      }
      spans.insert(spans.end(), {r, offset - r * row_length, static_cast<int64_t>(s.ids.size())});
      offset += static_cast<int64_t>(s.ids.size());
    }
  }
  AttentionSpec spec;
  if (options.pack) {
    spec.kind = AttentionSpec::Kind::kSegments;
    spec.spans = at::tensor(spans, long_options).view({-1, 3});
  }
  auto hidden = model_.hidden(at::tensor(ids, long_options).view({batch, row_length}).to(device),
                              at::tensor(pos, long_options).view({batch, row_length}).to(device), spec, nullptr);
  // Only the predicting positions reach the vocabulary projection: [N, vocab] instead of
  // [rows × length, vocab], which for a 150k vocabulary is most of the activation memory.
  auto picked = hidden.reshape({batch * row_length, -1}).index_select(0, at::tensor(source, long_options).to(device));
  // At temperature 1 there is nothing to divide: the division would be a pass each way over the
  // [N, vocab] float32 logits (3 ms of a 1.5B model's 210 ms training step on an H100).
  auto logits = model_.logits(picked);
  if (options.temperature != 1.0) logits = logits / options.temperature;
  auto logp = logits.log_softmax(-1);
  if (options.entropy) {
    c10::NoGradGuard no_grad;
    // In slices of rows, since p is another [rows, vocab] float32 tensor; sum(p log p) as a batched
    // dot product reads p and log p once, where a product and a sum would write and read p log p.
    constexpr int64_t kRows = 1024;
    std::vector<at::Tensor> slices;
    const auto detached = logp.detach();
    for (int64_t begin = 0; begin < detached.size(0); begin += kRows) {
      const auto slice = detached.narrow(0, begin, std::min(kRows, detached.size(0) - begin));
      slices.push_back(-at::matmul(slice.exp().unsqueeze(1), slice.unsqueeze(2)).view({-1}));
    }
    *options.entropy = at::cat(slices).to(at::kFloat);
  }
  return logp.gather(1, at::tensor(target, long_options).to(device).unsqueeze(1)).squeeze(1);
}

void NativeBackbone::save(const fs::path& dir) const {
  fs::create_directories(dir);
  HostTensors host;
  if (model_.training().mode == Training::Mode::lora) {
    for (const auto& [name, tensor] : model_.named_adapters()) host.add(name, tensor);
    write_safetensors(dir / "adapter_model.safetensors", host.views, {{"format", "pt"}});
    const auto& lora = model_.training().lora;
    nlohmann::json adapter = {{"peft_type", "LORA"},
                              {"task_type", "CAUSAL_LM"},
                              {"r", lora.rank},
                              {"lora_alpha", lora.alpha},
                              {"lora_dropout", 0.0},
                              {"bias", "none"},
                              {"target_modules", lora.target_modules},
                              {"fan_in_fan_out", false},
                              {"inference_mode", true},
                              {"base_model_name_or_path", fs::absolute(dir_).string()}};
    core::write_file_atomic(dir / "adapter_config.json", adapter.dump(2) + "\n");
    return;
  }
  for (const auto& [name, tensor] : model_.named_weights()) host.add(name, tensor);
  // A shard limit someone chose (init-model's) travels in the files' metadata, so that a model saved
  // in one file under it (bf16 weights) still splits when a later save grows (fp32 masters).
  std::map<std::string, std::string> metadata{{"format", "pt"}};
  if (max_shard_bytes_ != kSavePretrainedDefault) metadata[kShardLimitKey] = std::to_string(max_shard_bytes_);
  write_checkpoint(dir, host.views, max_shard_bytes_, metadata);
  // Saved in the parameters' own dtype (fp32 masters stay fp32), so load() restores them exactly.
  nlohmann::json config = config_.raw;
  const char* dtype = hf_dtype_name(host.keep.front().scalar_type());
  config[config.contains("torch_dtype") ? "torch_dtype" : "dtype"] = dtype;
  core::write_file_atomic(dir / "config.json", config.dump(2) + "\n");
  if (fs::equivalent(dir, dir_)) return;
  for (const char* name : kCompanionFiles)
    if (fs::exists(dir_ / name)) fs::copy_file(dir_ / name, dir / name, fs::copy_options::overwrite_existing);
}

void NativeBackbone::load(const fs::path& dir) {
  graphs_.clear();  // weights are copied in place, but a graph must never outlive what it was captured on
  if (fs::exists(dir / "adapter_config.json")) {
    model_.load_adapters(SafetensorsFile::open(dir / "adapter_model.safetensors"));
    return;
  }
  const auto config = load_model_config(dir);
  if (config.hidden_size != config_.hidden_size || config.num_hidden_layers != config_.num_hidden_layers ||
      config.vocab_size != config_.vocab_size)
    throw std::runtime_error(
        fmt::format("{}: a {}-layer, hidden {} model cannot be loaded into this {}-layer, hidden {} one", dir.string(),
                    config.num_hidden_layers, config.hidden_size, config_.num_hidden_layers, config_.hidden_size));
  model_.load_weights(Checkpoint::open(dir));
}

}  // namespace

std::string local_rank_device(const std::string& name, int local_rank) {
  if (name == "cuda" || (name == "auto" && at::hasCUDA())) return fmt::format("cuda:{}", local_rank);
  return name == "auto" ? "cpu" : name;
}

namespace {

// The shard size a checkpoint was written with: its largest shard, or save_pretrained's default
// for a single file.
std::size_t shard_limit_of(const fs::path& model_dir) {
  for (const auto& e : fs::directory_iterator(model_dir))
    if (e.path().extension() == ".safetensors") {
      const auto file = SafetensorsFile::open(e.path());
      if (const auto it = file.metadata().find(kShardLimitKey); it != file.metadata().end())
        return std::stoull(it->second);
      break;
    }
  if (!fs::exists(model_dir / "model.safetensors.index.json")) return kSavePretrainedDefault;
  std::size_t largest = 0;
  for (const auto& e : fs::directory_iterator(model_dir))
    if (e.path().extension() == ".safetensors") largest = std::max<std::size_t>(largest, e.file_size());
  return largest > 0 ? largest : kSavePretrainedDefault;
}

}  // namespace

std::unique_ptr<TrainableBackbone> open_native_backbone(const fs::path& model_dir, const NativeOptions& options) {
  const auto device = resolve_device(options.device);
  TransformerOptions transformer_options{device, resolve_dtype(options.dtype, device)};
  auto config = load_model_config(model_dir);
  auto model = options.random_weights_seed
                   ? Transformer::random(config, transformer_options, *options.random_weights_seed)
                   : Transformer::load(config, Checkpoint::open(model_dir), transformer_options);
  model.enable_training(options.training, /*seed=*/0);
  std::optional<text::Tokenizer> tokenizer;
  if (fs::exists(model_dir / "tokenizer.json")) tokenizer = text::Tokenizer::from_file(model_dir / "tokenizer.json");
  std::optional<text::ChatTemplate> chat;
  std::string no_chat_reason = "the checkpoint has no tokenizer.json";
  if (!options.chat_template.empty()) {
    chat = text::ChatTemplate::from_model_dir(model_dir, options.chat_template);
  } else if (tokenizer) {
    try {
      chat = text::ChatTemplate::from_model_dir(model_dir);
    } catch (const text::ChatTemplateError& e) {
      // Base checkpoints often ship none; prompts by ids or text still work, and chat messages
      // are refused with this reason.
      no_chat_reason = e.what();
    }
  }
  return std::make_unique<NativeBackbone>(model_dir, std::move(config), std::move(model), std::move(tokenizer),
                                          std::move(chat), std::move(no_chat_reason),
                                          options.max_shard_bytes ? options.max_shard_bytes : shard_limit_of(model_dir),
                                          options.cuda_graphs, options.bucketed_decode,
                                          /*keep_decode_state=*/options.training.mode == Training::Mode::none);
}

}  // namespace vinci::llm
