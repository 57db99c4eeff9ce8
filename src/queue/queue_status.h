// What the queue is doing, read from Redis alone (`vinci worker --status`).
//
// What the queue is doing, read from Redis alone, so any host can ask (`vinci worker --status`): the
// live workers by their heartbeats (with the evaluator each announces), how many jobs wait and how
// many are being evaluated in each evaluator's stream, results a minute, and the failures the workers
// counted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "queue/queue_layout.h"
#include "queue/redis_connection.h"
#include "queue/worker_evaluator.h"

namespace vinci::queue {

struct WorkerStatus {
  std::string name, host, stream, sandbox;
  long long pid = 0;
  std::optional<WorkerEvaluator> evaluator;  // absent for a worker of the untagged stream
  long long evaluated = 0, duplicates = 0, worker_lost = 0, refused = 0, failed = 0, forwarded = 0, released = 0;
};

struct StreamStatus {
  std::string stream;
  long long waiting = 0;  // entries no worker has been handed yet
  long long pending = 0;  // handed out and not acknowledged: being evaluated, or their worker died
};

struct QueueStatus {
  long long waiting = 0, pending = 0;  // over every stream
  long long results_last_minute = 0;
  std::vector<StreamStatus> streams;  // the untagged stream and every evaluator's, by name
  std::vector<WorkerStatus> workers;  // those whose heartbeat has not expired, by name
};

QueueStatus read_status(RedisConnection& redis, const QueueLayout& layout);
// The heartbeats alone: what a submitter reads to learn the evaluators it may key jobs for.
std::vector<WorkerStatus> live_workers(RedisConnection& redis, const QueueLayout& layout);

std::string format_status(const QueueStatus& status, const std::string& where);  // a table
nlohmann::json to_json(const QueueStatus& status);

}  // namespace vinci::queue
