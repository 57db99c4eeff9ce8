// The decoder of the Qwen2, Qwen3 and Llama-3 families on ATen, with optional LoRA.
//
// The decoder-only transformer of the Qwen2/Qwen2.5, Qwen3 and Llama-3 families on ATen: GQA,
// RoPE (llama3 scaling), RMSNorm, SwiGLU, q/k/v bias (Qwen2), per-head q/k RMSNorm (Qwen3), tied
// or untied embeddings, optional LoRA adapters.
//
// Numerics follow transformers step by step (RMSNorm in fp32 then cast back before the weight,
// cos/sin in fp32 then cast to the compute dtype, residual adds in the compute dtype), so fp32 on
// CPU reproduces its logits to ~1e-6 and bf16 on GPU to bf16 rounding.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "llm/lora.h"
#include "llm/model_config.h"
#include "llm_native/paged_kv_cache.h"

namespace vinci::llm {

class Checkpoint;
class DecodeKernels;
class SafetensorsFile;

// How positions attend. Positions are per token, so rows of one batch may be at different steps.
struct AttentionSpec {
  enum class Kind {
    kCausal,    // each row one sequence, right-padded; padded positions are never read as keys
    kSegments,  // rows pack several sequences, each attending causally within itself (spans)
    kDecode,    // new tokens at their positions (one per row, or a chunk of a prompt), written into
                // the cache and attending to its positions 0..position
  } kind = Kind::kCausal;
  // kSegments only: [n, 3] int64 on the CPU, a (row, start, length) per sequence, rows in order and
  // each row's sequences in order; positions no sequence covers are padding.
  at::Tensor spans;
  int64_t kv_length = 0;  // kDecode only: 1 + the largest position, known on the host (reading it
                          // back from the device would stall the launch queue at every layer)
  // With a cache: each row's blocks (PagedKvCache::block_table) on the device, wide enough for
  // every position of the call (kv_length's too). A causal call with a cache is a prefill from
  // position 0: it writes its keys and values and attends among its own tokens.
  at::Tensor block_table;
  // Set by hidden() from the table: the pool slot of each new token [B·T] (padding lands in the
  // scratch block), and for kDecode the blocks each row reads [B·blocks] (kv_length rounded up to
  // whole blocks) and the positions each token sees, [B, 1, T, kv_length].
  at::Tensor write_slots, read_blocks, visible_keys;
};

// One HF linear layer, or several fused along the output dimension (q|k|v, gate|up): a decode
// step is bound by kernel launches as much as by bytes, and fusing saves two of three matmuls.
struct Linear {
  struct Part {
    std::string name;   // the HF module, e.g. "self_attn.q_proj"
    int64_t rows = 0;   // its share of the output
    at::Tensor lora_a;  // [rank, in], undefined without LoRA
    at::Tensor lora_b;  // [rows, rank], zero-initialised so training starts at the base model
  };
  at::Tensor weight;  // [sum of rows, in]
  at::Tensor bias;    // undefined when the layer has none
  std::vector<Part> parts;
};

struct DecoderLayer {
  at::Tensor input_norm, post_attention_norm, q_norm, k_norm;  // q/k norm: Qwen3 only
  Linear qkv, o, gate_up, down;
};

struct TransformerOptions {
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;  // compute dtype
};

class Transformer {
 public:
  static Transformer load(const ModelConfig& config, const Checkpoint& checkpoint, const TransformerOptions& options);
  static Transformer random(const ModelConfig& config, const TransformerOptions& options, uint64_t seed);

  // Final-norm hidden states [B, T, hidden] for ids [B, T] at positions [B, T]. With a cache,
  // the new keys and values are written at their positions' slots.
  at::Tensor hidden(const at::Tensor& ids, const at::Tensor& positions, const AttentionSpec& spec,
                    PagedKvCache* cache) const;
  // [N, vocab] float32 logits of hidden states [N, hidden].
  at::Tensor logits(const at::Tensor& hidden) const;

  PagedKvCache::Shape cache_shape() const;

  // Switches on training: every weight (kFull) or fresh LoRA adapters (kLora) require grad;
  // with fp32_master they are kept in fp32 and cast per forward.
  void enable_training(const Training& training, uint64_t seed);
  std::vector<at::Tensor> trainable_parameters() const;

  // Weights under their HF names, split back out of the fused layers, in the compute dtype
  // (or fp32 masters). adapters() gives the LoRA tensors under PEFT's names instead.
  std::vector<std::pair<std::string, at::Tensor>> named_weights() const;
  std::vector<std::pair<std::string, at::Tensor>> named_adapters() const;
  // Copies tensors from a checkpoint (HF names) or an adapter file (PEFT names) into this model;
  // shapes must match.
  void load_weights(const Checkpoint& checkpoint);
  void load_adapters(const SafetensorsFile& adapters);

  const ModelConfig& config() const { return config_; }
  const TransformerOptions& options() const { return options_; }
  const Training& training() const { return training_; }

 private:
  friend struct CheckpointedLayer;
  Transformer(const ModelConfig& config, const TransformerOptions& options);  // weights allocated, not set
  at::Tensor project(const Linear& linear, const at::Tensor& x) const;
  // One output per part of a fused linear (e.g. gate and up), each from its own GEMM over the
  // weight's rows for that part: contiguous outputs, where slices of project()'s are strided.
  std::vector<at::Tensor> project_parts(const Linear& linear, const at::Tensor& x) const;
  at::Tensor norm(const at::Tensor& x, const at::Tensor& weight) const;
  // One decoder layer on the residual stream x.
  at::Tensor layer_forward(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                           const at::Tensor& positions, const AttentionSpec& spec, PagedKvCache* cache) const;
  std::vector<at::Tensor> layer_parameters(size_t index) const;  // those requiring grad
  at::Tensor attention(const DecoderLayer& layer, int64_t index, const at::Tensor& x, const at::Tensor& cos,
                       const at::Tensor& sin, const at::Tensor& positions, const AttentionSpec& spec,
                       PagedKvCache* cache) const;
  std::pair<at::Tensor, at::Tensor> rope_tables(const at::Tensor& positions) const;
  // The fused kernels when this call is a decode step they take (one bf16 token a row on CUDA, no
  // q/k norm, no autograd), else nullptr; fused_decode is hidden() through them.
  const DecodeKernels* decode_kernels_for(const at::Tensor& ids, const AttentionSpec& spec,
                                          const PagedKvCache* cache) const;
  at::Tensor fused_decode(const DecodeKernels& kernels, const at::Tensor& ids, const at::Tensor& positions,
                          const AttentionSpec& spec, PagedKvCache& cache) const;
  at::Tensor compute(const at::Tensor& weight) const;                          // the weight in the compute dtype
  at::Tensor lora_delta(const Linear::Part& part, const at::Tensor& x) const;  // the adapter's share of x's projection
  Linear build_linear(std::vector<std::pair<std::string, int64_t>> parts, int64_t in, bool bias) const;

  ModelConfig config_;
  TransformerOptions options_;
  Training training_;
  at::Tensor embed_tokens_, final_norm_, lm_head_;  // lm_head_ aliases embed_tokens_ when tied
  std::vector<DecoderLayer> layers_;
  at::Tensor inv_freq_;  // float32 on the device
};

}  // namespace vinci::llm
