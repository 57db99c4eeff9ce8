// What the co-evolution orchestrator hands the trainer each step.
//
// What the co-evolution orchestrator hands the trainer each step (the seam prime-rl draws between its
// orchestrator and trainer): the samples to train on, their advantages computed and PRS applied,
// and what the step's metrics need from the rollout side. Every rank holds the same batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rl/coevolution_metrics.h"
#include "rl/training_samples.h"

namespace vinci::rl {

struct CoevolutionBatch {
  int64_t step = 0;
  int epoch = 0;                        // the task cursor's epoch once the step's tasks were dealt
  size_t tasks = 0;                     // in the step's batch, over every rank
  std::vector<TrainingSample> samples;  // to train on, in batch order
  size_t built = 0;                     // samples built from the episodes, before PRS
  size_t untrainable = 0, prs_rejected = 0;
  size_t skills_proposed = 0, skills_verified = 0;
  size_t solved = 0;  // tasks whose best turn beat eager
  RoleStats policy, selection, summary;
  double generate_s = 0, evaluate_s = 0;  // the slowest rank's
  // Kernels sent to the evaluator over every rank, and those it measured (neither a cache hit nor
  // a twin of another in the same run).
  size_t candidates = 0, measured = 0;
};

}  // namespace vinci::rl
