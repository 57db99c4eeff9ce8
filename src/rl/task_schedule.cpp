#include "rl/task_schedule.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "core/hash.h"

namespace vinci::rl {

namespace {

std::vector<size_t> epoch_order(size_t n, uint64_t seed, int epoch) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

}  // namespace

TaskSchedule::TaskSchedule(std::span<const eval::Task> tasks, int tasks_per_step, uint64_t seed)
    : tasks_(tasks), per_step_(std::min<size_t>(std::max(1, tasks_per_step), tasks.size())), seed_(seed) {
  if (tasks.empty()) throw std::invalid_argument("co-evolution: no tasks");
  std::string ids;
  for (const auto& t : tasks) ids += t.id + "\n";
  suite_hash_ = core::content_hash(ids);
}

std::vector<const eval::Task*> TaskSchedule::next(TaskCursor& cursor) const {
  std::vector<const eval::Task*> batch;
  while (batch.size() < per_step_) {
    batch.push_back(&tasks_[epoch_order(tasks_.size(), seed_, cursor.epoch)[cursor.position]]);
    if (++cursor.position == tasks_.size()) ++cursor.epoch, cursor.position = 0;
  }
  return batch;
}

std::vector<size_t> rank_tasks(size_t batch_size, int rank, int world_size) {
  std::vector<size_t> out;
  for (size_t i = static_cast<size_t>(rank); i < batch_size; i += static_cast<size_t>(world_size)) out.push_back(i);
  return out;
}

}  // namespace vinci::rl
