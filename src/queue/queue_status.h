// What the queue is doing, read from Redis alone, so any host can ask (`vinci worker --status`, to
// come): the live workers by their heartbeats, how many jobs wait and how many are being evaluated,
// results a minute, and the failures the workers counted.
#pragma once

#include <string>
#include <vector>

#include "queue/queue_layout.h"
#include "queue/redis_connection.h"

namespace vinci::queue {

struct WorkerStatus {
  std::string name, host;
  long long pid = 0;
  long long evaluated = 0, duplicates = 0, worker_lost = 0, refused = 0, failed = 0;
};

struct QueueStatus {
  long long waiting = 0;  // entries no worker has been handed yet
  long long pending = 0;  // handed out and not acknowledged: being evaluated, or their worker died
  long long results_last_minute = 0;
  std::vector<WorkerStatus> workers;  // those whose heartbeat has not expired, by name
};

QueueStatus read_status(RedisConnection& redis, const QueueLayout& layout);

}  // namespace vinci::queue
