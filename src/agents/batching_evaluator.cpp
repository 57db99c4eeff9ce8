#include "agents/batching_evaluator.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::agents {

BatchingEvaluator::BatchingEvaluator(KernelEvaluator& inner, int clients) : inner_(inner), active_(clients) {
  if (clients < 1)
    throw std::invalid_argument(fmt::format("BatchingEvaluator needs at least 1 client, got {}", clients));
}

std::vector<eval::Result> BatchingEvaluator::evaluate(const std::vector<eval::Job>& jobs) {
  Request mine;
  mine.jobs = &jobs;
  std::unique_lock lock(mu_);
  pending_.push_back(&mine);
  changed_.notify_all();
  while (!mine.done) {
    if (!running_ && !pending_.empty() && static_cast<int>(pending_.size()) >= active_)
      run_pending(lock);
    else
      changed_.wait(lock);
  }
  if (mine.error) std::rethrow_exception(mine.error);
  return std::move(mine.results);
}

void BatchingEvaluator::leave() {
  std::lock_guard lock(mu_);
  --active_;
  changed_.notify_all();  // the batch may now be complete: a waiting client runs it
}

void BatchingEvaluator::run_pending(std::unique_lock<std::mutex>& lock) {
  running_ = true;
  std::vector<Request*> batch;
  batch.swap(pending_);
  lock.unlock();
  std::vector<eval::Job> all;
  for (const Request* r : batch) all.insert(all.end(), r->jobs->begin(), r->jobs->end());
  std::vector<eval::Result> results;
  std::exception_ptr error;
  try {
    results = inner_.evaluate(all);
    if (results.size() != all.size())
      throw std::logic_error(fmt::format("the evaluator answered {} of {} jobs", results.size(), all.size()));
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  size_t next = 0;
  for (Request* r : batch) {
    r->error = error;
    if (!error)
      r->results.assign(std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next)),
                        std::make_move_iterator(results.begin() + static_cast<std::ptrdiff_t>(next + r->jobs->size())));
    next += r->jobs->size();
    r->done = true;
  }
  running_ = false;
  changed_.notify_all();
}

}  // namespace vinci::agents
