// The submitting side of the queue: jobs onto the stream, results from the store.
//
// The submitting side of the queue: a job goes onto the stream unless its result is already in the
// store or the same key is already queued or running, and results are collected from the store.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "queue/job_protocol.h"
#include "queue/queue_layout.h"
#include "queue/redis_connection.h"

namespace vinci::queue {

enum class SubmitOutcome {
  queued,     // added to the stream
  done,       // its result is in the store already
  in_flight,  // the same key is queued or being evaluated: its result will come without a second job
};

// Creates the stream and its consumer group when they are missing (both sides call it, in any order).
void ensure_group(RedisConnection& redis, const QueueLayout& layout);

class JobQueue {
 public:
  explicit JobQueue(RedisConnection& redis, QueueLayout layout = {});

  // One atomic step on the server (a script), so two submitters of one key cannot both queue it.
  SubmitOutcome submit(const QueueJob& job);
  std::optional<ResultRecord> result(const std::string& key);
  // Waits until every key has a result or timeout passes; returns the results found, by key, and
  // hands each to on_result as it is found. Woken by the results stream, read again from the store,
  // so a wake-up missed or doubled changes nothing.
  std::map<std::string, ResultRecord> wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                                           const std::function<void(const ResultRecord&)>& on_result = {});

 private:
  RedisConnection& redis_;
  QueueLayout layout_;
};

}  // namespace vinci::queue
