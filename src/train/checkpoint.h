// Training checkpoints: everything a killed run needs to continue as if it had not stopped.
//   <dir>/step-<N>/model/            the backbone's save() (HF safetensors, or the LoRA adapter)
//   <dir>/step-<N>/optimizer.safetensors  AdamW's state tensors
//   <dir>/step-<N>/trainer.json      the step, the data cursor and whatever else the trainer keeps
//   <dir>/latest                     the name of the newest complete checkpoint
// A checkpoint is written under a temporary name and renamed into place before `latest` moves to
// it, so a kill at any moment leaves the previous checkpoint intact and current.
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "llm/backbone.h"
#include "train/adamw.h"

namespace vinci::train {

void save_checkpoint(const std::filesystem::path& dir, int64_t step, const llm::TrainableBackbone& backbone,
                     const AdamW& optimizer, const nlohmann::json& trainer_state);

// The newest complete checkpoint under dir, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& dir);

// The trainer state of a checkpoint (its trainer.json, holding at least "step"). Throws naming the
// file and, when one reads, the previous checkpoint a resume could go on from.
nlohmann::json read_trainer_state(const std::filesystem::path& checkpoint);

// Restores the model and the optimizer in place and returns the trainer state. Throws naming the
// file at fault and, as read_trainer_state, an intact previous checkpoint.
nlohmann::json load_checkpoint(const std::filesystem::path& checkpoint, llm::TrainableBackbone& backbone,
                               AdamW& optimizer);

}  // namespace vinci::train
