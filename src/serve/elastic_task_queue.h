// The connections' threads for httplib's blocking server. Each connection holds a thread while its
// request is read and while it waits on its batch, so a fixed pool lets idle or trickling sockets
// take every thread and stall /health and real requests behind them. This queue starts a thread
// whenever none is free, up to max_threads, and lets a thread that has waited idle for a while end:
// an idle socket then costs one sleeping thread until the server's read deadline drops it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace vinci::serve {

// The server adapts it to httplib::TaskQueue (openai_server.cpp).
class ElasticTaskQueue {
 public:
  explicit ElasticTaskQueue(size_t max_threads, std::chrono::milliseconds idle_exit = std::chrono::seconds(30));
  ~ElasticTaskQueue();
  ElasticTaskQueue(const ElasticTaskQueue&) = delete;
  ElasticTaskQueue& operator=(const ElasticTaskQueue&) = delete;

  void enqueue(std::function<void()> fn);
  void shutdown();  // runs what is queued, then ends every thread

  size_t threads() const;  // alive now

 private:
  void work();

  const size_t max_threads_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, ended_;
  std::deque<std::function<void()>> jobs_;
  size_t threads_ = 0, idle_ = 0;
  bool stopping_ = false;
};

}  // namespace vinci::serve
