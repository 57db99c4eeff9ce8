// One run of `vinci train sft`: the diversity filter, the model on this rank's device, the trainer.
//
// The diversity filter's report goes to out/filter_report.jsonl, every step to a line of
// out/metrics.jsonl, and the model (or its LoRA adapter) to out/final once every epoch is done.
// Under torchrun each rank trains its share of every batch and rank 0 alone writes.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

#include "llm_native/native_backbone.h"
#include "parallel/data_parallel.h"
#include "rl/diversity_filter.h"
#include "train/sft_trainer.h"

namespace vinci::train {

// torchrun's place for this process (a single process when not launched by it).
parallel::LaunchEnvironment launched();

// The device a rank runs the model on: its local GPU under torchrun.
std::string rank_device(const parallel::LaunchEnvironment& launch, const std::string& device);

// The ranks joined (nothing to join for a single process), on the device of the backbone's parameters.
parallel::DataParallel join(const parallel::LaunchEnvironment& launch, llm::TrainableBackbone& backbone,
                            std::chrono::seconds timeout);

struct SftRun {
  std::filesystem::path data, out;
  std::string model;
  llm::NativeOptions native;  // its device is this process's; under torchrun each rank takes its local GPU
  bool filter = true;
  rl::DiversityConfig filter_config;
  SftConfig sft;  // checkpoint_dir is set to out/checkpoints
  std::chrono::seconds distributed_timeout{1800};
};

struct SftRunOutcome {
  bool main = true;  // rank 0, which wrote the outputs; the others report nothing
  size_t conversations = 0, kept = 0;
  rl::DiversityReport filtered;  // empty when the filter was off
  SftOutcome trained;
  bool saved = false;  // out/final written
};

// Throws std::runtime_error naming the file or the option on bad input (an earlier run in out
// without resume, a conversation the template cannot split), before anything is trained.
SftRunOutcome run_sft(SftRun run);

}  // namespace vinci::train
