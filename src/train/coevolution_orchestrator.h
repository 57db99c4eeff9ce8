// The rollout side of a co-evolution step: agents, episodes, the mixed batch.
//
// The rollout side of a co-evolution step (design.md §5-§6): the library as the last flush left it,
// this rank's tasks through selection, rollouts, summary and verification (agents::optimize), every
// rank's episodes gathered, then the mixed batch: advantages (rl/training_samples) and PRS. What it
// hands the trainer is a CoevolutionBatch. Rank 0 alone writes: the step's episodes, the admitted
// skills staged into the store and, once the step is trained, its snapshot.
#pragma once

#include <filesystem>
#include <span>

#include "agents/kernel_evaluator.h"
#include "agents/optimizer.h"
#include "agents/prompts.h"
#include "llm/backbone.h"
#include "parallel/data_parallel.h"
#include "rl/coevolution_batch.h"
#include "rl/task_schedule.h"
#include "skills/store.h"
#include "train/coevolution.h"

namespace vinci::train {

class CoevolutionOrchestrator {
 public:
  // out: where candidates/ and episodes/ go. The references must outlive the orchestrator.
  CoevolutionOrchestrator(llm::Backbone& backbone, agents::KernelEvaluator& evaluator, const agents::Prompts& prompts,
                          skills::SkillStore& store, const CoevolutionConfig& config, std::filesystem::path out,
                          agents::ProgressFn progress, const parallel::DataParallel& parallel);

  // The step's batch from its tasks (all ranks' tasks, in batch order; this rank runs its share).
  rl::CoevolutionBatch rollout(int64_t step, int epoch, std::span<const eval::Task* const> tasks);

  // The skills staged by the step written as its snapshot (rank 0); every rank returns once it is
  // there, as the next step's library is read from it.
  skills::FlushOutcome publish_library(int64_t step);

 private:
  llm::Backbone& backbone_;
  agents::KernelEvaluator& evaluator_;
  const agents::Prompts& prompts_;
  skills::SkillStore& store_;
  const CoevolutionConfig& config_;
  std::filesystem::path out_;
  agents::ProgressFn progress_;
  const parallel::DataParallel& parallel_;
};

}  // namespace vinci::train
