// Keeps a job its worker's while the evaluation runs, by resetting its idle time.
//
// Keeps a job a worker is evaluating its own while the evaluation runs: every third of the
// visibility timeout it resets the job's idle time (XCLAIM ... JUSTID, which does not count as a
// delivery) and the worker's heartbeat expiry. So the visibility timeout only has to outlast a dead
// worker's silence, not the slowest candidate, and a dead worker's job is taken over soon.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "queue/queue_layout.h"
#include "queue/redis_connection.h"

namespace vinci::queue {

class JobLease {
 public:
  // Opens its own connection (a hiredis connection serves one thread), so it throws what
  // RedisConnection's constructor throws.
  JobLease(const RedisUrl& url, QueueLayout layout, std::string worker, std::string entry_id,
           std::chrono::milliseconds visibility_timeout, std::chrono::seconds heartbeat_ttl);
  ~JobLease();
  JobLease(const JobLease&) = delete;
  JobLease& operator=(const JobLease&) = delete;

 private:
  void renew_until_stopped();

  RedisConnection redis_;
  QueueLayout layout_;
  std::string worker_, entry_id_;
  std::chrono::milliseconds interval_;
  std::chrono::seconds heartbeat_ttl_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace vinci::queue
