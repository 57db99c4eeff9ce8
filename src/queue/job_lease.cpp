#include "queue/job_lease.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace vinci::queue {

namespace {

RedisOptions lease_options(std::chrono::milliseconds visibility_timeout) {
  // A renewal that waits out a restarting server longer than the timeout has lost the job anyway.
  RedisOptions o;
  o.reconnect_for = visibility_timeout;
  return o;
}

}  // namespace

JobLease::JobLease(const RedisUrl& url, QueueLayout layout, std::string worker, std::string entry_id,
                   std::chrono::milliseconds visibility_timeout, std::chrono::seconds heartbeat_ttl)
    : redis_(url, lease_options(visibility_timeout)),
      layout_(std::move(layout)),
      worker_(std::move(worker)),
      entry_id_(std::move(entry_id)),
      interval_(std::max(visibility_timeout / 3, std::chrono::milliseconds(1))),
      heartbeat_ttl_(heartbeat_ttl),
      thread_([this] { renew_until_stopped(); }) {}

JobLease::~JobLease() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void JobLease::renew_until_stopped() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    try {
      redis_.command({"XCLAIM", layout_.stream(), layout_.group(), worker_, "0", entry_id_, "JUSTID"});
      redis_.command({"EXPIRE", layout_.worker(worker_), std::to_string(heartbeat_ttl_.count())});
    } catch (const std::exception& e) {
      // The evaluation goes on: at worst the job is claimed by another worker and evaluated twice,
      // which the result store absorbs.
      spdlog::warn("queue worker {}: could not renew job {}: {}", worker_, entry_id_, e.what());
    }
    lock.lock();
  }
}

}  // namespace vinci::queue
