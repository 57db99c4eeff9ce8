// The co-evolution run: the three agents trained together while the skill library grows.
//
// The co-evolution step of daVinci-kernel (design.md §5-§6): the three agents trained together on
// one backbone while the skill library grows. Each step, for a batch of tasks:
//   1. selection (k schemes + the null scheme), 2. policy rollouts (n per scheme, T turns) judged by
//   the evaluator, 3. summaries of rollouts that improved, then verification, 4. the admitted skills
//   staged; 5. one gradient update on the mixed batch of every agent's calls (PRS thins correct
//   turns, MRS drops drifted sequences), 6. the staged skills flushed as the step's snapshot,
//   7. a checkpoint every N steps.
// The agents see the library as the last flushed snapshot left it: a step's own admissions reach
// the next step, never the rollouts they came from.
//
// The step is two halves with a typed batch between them: train/coevolution_orchestrator (rollouts,
// episodes, advantages, PRS; the library) makes a CoevolutionBatch, train/coevolution_trainer (the
// update, MFU, checkpoints) trains on it.
//
// Data parallel (parallel/data_parallel): the step's tasks are dealt out across ranks, which run their
// rollouts and summaries alone; the episodes then go to every rank, so the mixed batch, PRS and the
// metrics are the same everywhere and as one process would make them. Each rank trains on its
// share of the batch (rank_share: balanced by tokens), the gradients are summed, and rank 0 alone
// writes: the skill library, episodes, checkpoints, metrics and the final model.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "agents/kernel_evaluator.h"
#include "agents/optimizer.h"
#include "agents/prompts.h"
#include "eval/task.h"
#include "llm/backbone.h"
#include "llm/model_config.h"
#include "parallel/data_parallel.h"
#include "rl/coevolution_metrics.h"
#include "rl/rejection.h"
#include "rl/step_deadline.h"
#include "rl/training_samples.h"
#include "skills/store.h"
#include "train/adamw.h"
#include "train/policy_step.h"

namespace vinci::train {

struct CoevolutionConfig {
  int64_t steps = 100;
  int tasks_per_step = 8;
  // A rank's tasks of a step run this many at once, in lockstep (agents/lockstep.h): their
  // generations batch on the model and their kernels share pool runs.
  int parallel_tasks = 8;
  uint64_t seed = 0;
  int64_t checkpoint_every = 10;  // 0: only at the end
  agents::OptimizeSettings agents = [] {
    agents::OptimizeSettings s;
    s.samples = 2;       // rollouts per scheme
    s.policy.turns = 3;  // design.md §5: 3 in training
    return s;
  }();
  rl::SampleConfig samples;
  PolicyStepConfig update;
  AdamWConfig optimizer;
  bool prs = true;
  rl::PrsConfig prs_config;
  double peak_tflops = 989.0;            // the device's dense bf16 peak, for the MFU of the update (H100 SXM)
  int64_t distributed_timeout_s = 3600;  // data parallel: the longest wait for another rank
};

// Where a run writes, whether it goes on from a checkpoint, and whom it tells.
struct CoevolutionRun {
  std::filesystem::path out;              // metrics.jsonl, checkpoints/, candidates/, episodes/, final/
  bool resume = false;                    // from the newest checkpoint in out; the metrics lines after it go
  std::optional<llm::ModelConfig> model;  // the model's shape, for the update's MFU
  std::function<void(const rl::CoevolutionMetrics&)> on_step;  // each step's metrics, on rank 0 only
  agents::ProgressFn progress;
  // A job's time limit: no step starts that the slowest step so far would carry past it. The run
  // then checkpoints the step it finished last and saves final/, and --resume goes on from there.
  // Every rank stops at the same step when any rank's clock says so.
  std::optional<rl::StepDeadline::Clock::time_point> deadline = std::nullopt;
  // The held-out curve (train/heldout_point.h): every heldout_every steps (0: never) a point on these
  // tasks, taken by rank 0 after the step's checkpoint; its answers go to out/heldout/step-N/.
  std::vector<eval::Task> heldout = {};
  int64_t heldout_every = 0;
};

// Runs config.steps steps (fewer remain after a resume, or the deadline stops it), each a line of
// out/metrics.jsonl, and saves the model to out/final. Returns the step the run ended at.
int train_coevolution(llm::TrainableBackbone& backbone, agents::KernelEvaluator& evaluator,
                      const agents::Prompts& prompts, skills::SkillStore& store, std::span<const eval::Task> tasks,
                      const CoevolutionConfig& config, const CoevolutionRun& run,
                      const parallel::DataParallel& parallel = {});

}  // namespace vinci::train
