#include "serve/elastic_task_queue.h"

#include <algorithm>
#include <thread>

namespace vinci::serve {

ElasticTaskQueue::ElasticTaskQueue(size_t max_threads, std::chrono::milliseconds idle_exit)
    : max_threads_(std::max<size_t>(1, max_threads)), idle_exit_(idle_exit) {}

ElasticTaskQueue::~ElasticTaskQueue() { shutdown(); }

void ElasticTaskQueue::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(fn));
  // Beyond max_threads a connection waits for a thread: the cap bounds memory, not the idle ones.
  if (idle_ < jobs_.size() && threads_ < max_threads_) {
    ++threads_;
    std::thread([this] { work(); }).detach();
  }
  wake_.notify_one();
}

void ElasticTaskQueue::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    ++idle_;
    const bool woke = wake_.wait_for(lock, idle_exit_, [this] { return stopping_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty() && (stopping_ || !woke)) break;
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
  --threads_;
  ended_.notify_all();
}

void ElasticTaskQueue::shutdown() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  ended_.wait(lock, [this] { return threads_ == 0; });
}

size_t ElasticTaskQueue::threads() const {
  std::lock_guard lock(mutex_);
  return threads_;
}

}  // namespace vinci::serve
