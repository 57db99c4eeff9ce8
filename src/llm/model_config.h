// A Hugging Face checkpoint's config.json, reduced to what our model families use.
//
// The config.json of a Hugging Face checkpoint, reduced to what our model families use, with the
// defaults transformers applies per model type.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::llm {

// type is "default" or "llama3"; the other fields matter for llama3 only.
struct RopeScaling {
  std::string type = "default";
  double factor = 1.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;
};

struct ModelConfig {
  std::string model_type;  // "qwen2", "qwen3", "llama"
  int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0, num_attention_heads = 0,
          num_key_value_heads = 0, head_dim = 0, max_position_embeddings = 0;
  double rms_norm_eps = 1e-6, rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  // qwen2: q/k/v carry a bias, always (o_proj never). llama and qwen3: q/k/v/o all carry one
  // exactly when attention_bias is set.
  bool attention_bias = false;
  bool qk_norm = false;  // RMSNorm on q and k per head: qwen3
  bool mlp_bias = false;
  std::string torch_dtype;  // "bfloat16", …; empty when the file names none
  // config.json's, then generation_config.json's, deduplicated. The family defaults transformers
  // applies (llama: bos 1, eos 2) stand only where neither file names a token.
  std::vector<int32_t> eos_token_ids;
  std::optional<int32_t> bos_token_id;
  nlohmann::json raw;  // config.json as read, so a save can write it back unchanged
};

// Reads model_dir/config.json, and model_dir/generation_config.json when present.
ModelConfig load_model_config(const std::filesystem::path& model_dir);

// Throws std::runtime_error naming source_name and the field for a missing or mistyped field, an
// unsupported model_type (listing the supported ones), rope type or enabled sliding window.
ModelConfig parse_model_config(const nlohmann::json& config, const std::string& source_name);

// Training FLOPs of one token through the model, the usual accounting: 6 x the parameters its
// matmuls use (every decoder layer's projections; the output projection only for the tokens that
// reach it, counted by the caller as `projected`) plus 6 x layers x hidden x context for causal
// attention. Returns {per token, per projected token}.
std::pair<double, double> training_flops(const ModelConfig& config, int64_t context);

// The head_dim/2 RoPE inverse frequencies, with llama3 scaling applied, computed in float32 step by
// step as transformers computes them, so they agree to the last bit or so.
std::vector<float> rope_inv_freq(const ModelConfig& config);

}  // namespace vinci::llm
