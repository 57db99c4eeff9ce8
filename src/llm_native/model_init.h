// A model started from nothing: a Hugging Face checkpoint with random weights.
//
// A model started from nothing (issue 16, item 4): a Hugging Face checkpoint with random weights,
// from a small config.json a user writes and a tokenizer folder (scripts/train_tokenizer.py), which
// vinci's commands and transformers both load. The config may leave out what the tokenizer decides:
// vocab_size (the tokenizer's, rounded up to a multiple of 64) and the eos and bos token ids (the
// tokens tokenizer_config.json names).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "llm/model_config.h"

namespace vinci::llm {

struct ModelInitSpec {
  std::filesystem::path config;     // a config.json: model_type and the shape
  std::filesystem::path tokenizer;  // a folder holding tokenizer.json, and tokenizer_config.json
  std::filesystem::path out;        // created whole or not at all; it must not exist
  uint64_t seed = 0;
  std::string dtype = "float32";  // the weights' dtype on disk
  // The largest safetensors file; later saves of the model keep its shards (NativeOptions).
  std::size_t max_shard_bytes = 16u << 20;
};

struct ModelInitSummary {
  ModelConfig config;
  int64_t parameters = 0;
  std::vector<std::pair<std::string, std::uintmax_t>> files;  // name and bytes, sorted by name
};

// Throws core::SetupError naming the file and field for a config or tokenizer it cannot use.
ModelInitSummary init_model(const ModelInitSpec& spec);

// The config.json init_model writes: the user's, with vocab_size, eos_token_id, bos_token_id,
// architectures and torch_dtype filled in where it leaves them out. Throws core::SetupError.
nlohmann::json complete_model_config(nlohmann::json config, const std::filesystem::path& config_file,
                                     const std::filesystem::path& tokenizer_dir, const std::string& dtype);

}  // namespace vinci::llm
