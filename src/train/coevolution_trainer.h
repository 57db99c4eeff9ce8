// The training side of a co-evolution step: weights, AdamW, checkpoints.
//
// The training side of a co-evolution step: the weights and AdamW's state, restored from the newest
// checkpoint when a run resumes; one update on this rank's share of the orchestrator's batch (shares
// balanced by tokens, gradients summed over ranks), its throughput and MFU; checkpoints when due and
// the final model. Rank 0 alone writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "llm/backbone.h"
#include "parallel/data_parallel.h"
#include "rl/coevolution_batch.h"
#include "rl/task_schedule.h"
#include "train/adamw.h"
#include "train/coevolution.h"
#include "train/policy_step.h"

namespace vinci::train {

// Where a run stands after a step: what a checkpoint keeps beside the weights.
struct RunPosition {
  int64_t step = 0;  // steps done
  rl::TaskCursor tasks;
  int64_t skills_snapshot = 0;  // the library's snapshot the step flushed
};

struct TrainStats {
  PolicyStepStats update;
  double seconds = 0;
  double tokens_per_s = 0, mfu = 0;
};

class CoevolutionTrainer {
 public:
  // The backbone and the group must outlive the trainer; the config and the run are copied.
  CoevolutionTrainer(llm::TrainableBackbone& backbone, CoevolutionConfig config, CoevolutionRun run,
                     const parallel::DataParallel& parallel);

  // Restores the newest checkpoint when the run resumes (nothing to restore: a fresh start), then
  // gives every rank rank 0's weights (a LoRA adapter's random start included). Throws when the
  // checkpoint was made on another task suite.
  RunPosition start(const std::string& suite_hash);

  TrainStats train(const rl::CoevolutionBatch& batch);

  // A checkpoint at every checkpoint_every-th step and at the last one (rank 0); with force, at
  // this step whatever the schedule (a run stopped by its deadline).
  void checkpoint(const RunPosition& position, const std::string& library, bool force = false);

  // The trained model as --out/final (rank 0).
  void finish();

 private:
  llm::TrainableBackbone& backbone_;
  const CoevolutionConfig config_;
  const CoevolutionRun run_;
  const parallel::DataParallel& parallel_;
  AdamW optimizer_;
  std::string suite_hash_;
  int saved_step_ = -1;  // the step last checkpointed, so that a forced checkpoint never writes it twice
};

}  // namespace vinci::train
