// The native backbone: a Hugging Face checkpoint run on libtorch (CPU or CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/backbone.h"
#include "llm/lora.h"

namespace vinci::llm {

struct NativeOptions {
  std::string device = "auto";          // "auto" (cuda when present), "cpu", "cuda", "cuda:N"
  std::string dtype = "auto";           // "auto" (bf16 on GPU, fp32 on CPU), "float32", "bfloat16", "float16"
  Training training;                    // what logprobs() trains; kNone keeps the model frozen
  std::filesystem::path chat_template;  // overrides the checkpoint's template
  // Weights drawn at random instead of read from disk (speed measurements need no real weights).
  std::optional<uint64_t> random_weights_seed;
  // The largest safetensors file a save writes, sharding beyond it as save_pretrained does. 0: the
  // limit the checkpoint's metadata records (a save under a chosen limit records it), else its
  // largest shard when sharded, else save_pretrained's 5 GB. So a model started in 16 MiB files
  // keeps them through every checkpoint of its training, even one that began as a single file.
  std::size_t max_shard_bytes = 0;
  // On a GPU, small-batch decode steps are replayed from CUDA graphs (where the build has them).
  bool cuda_graphs = true;
  // Small-batch decode steps in the graphs' shapes (rows padded with scratch rows to a power of
  // two, spans in whole steps) even where no graph replays them: the graphs' own computation, run
  // eagerly, so that a machine without a GPU checks it.
  bool bucketed_decode = false;
};

// A data-parallel rank's device: "auto" and "cuda" become cuda:<local_rank> where CUDA is present
// ("auto" otherwise cpu); an explicit "cuda:N" or "cpu" stays.
std::string local_rank_device(const std::string& name, int local_rank);

std::unique_ptr<TrainableBackbone> open_native_backbone(const std::filesystem::path& model_dir,
                                                        const NativeOptions& options);

}  // namespace vinci::llm
