// Which tasks a co-evolution step trains on, and which rank runs each. Every epoch is a shuffle of
// the suite that depends on the seed and the epoch alone, so (epoch, position) is the whole cursor a
// checkpoint keeps, and a resumed run deals the very tasks the uninterrupted one would have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "eval/task.h"

namespace vinci::rl {

struct TaskCursor {
  int epoch = 1;
  size_t position = 0;  // the next task's place in the epoch's order
};

class TaskSchedule {
 public:
  // Throws std::invalid_argument when there are no tasks. A step takes min(max(1, per_step), suite size) tasks.
  TaskSchedule(std::span<const eval::Task> tasks, int tasks_per_step, uint64_t seed);

  // The next step's tasks, in batch order; the cursor moves past them (into the next epoch when one ends).
  std::vector<const eval::Task*> next(TaskCursor& cursor) const;

  // The suite's identity: a cursor means something only on the suite it was made on.
  const std::string& suite_hash() const { return suite_hash_; }

 private:
  std::span<const eval::Task> tasks_;
  size_t per_step_;
  uint64_t seed_;
  std::string suite_hash_;
};

// The places of a step's batch that one rank runs: every world_size-th, from its rank.
std::vector<size_t> rank_tasks(size_t batch_size, int rank, int world_size);

}  // namespace vinci::rl
