// Where the queue keeps things in Redis, under one prefix so that several queues (or other users)
// can share a server. Submitters and workers must agree on it; nothing else names these keys.
#pragma once

#include <string>

namespace vinci::queue {

struct QueueLayout {
  std::string prefix = "vinci";

  std::string stream() const { return prefix + ":jobs"; }      // the jobs, one entry each
  std::string group() const { return "workers"; }              // the consumer group every worker joins
  std::string results() const { return prefix + ":results"; }  // one entry per result written: a wake-up
  std::string result(const std::string& key) const { return prefix + ":result:" + key; }  // the store
  std::string in_flight(const std::string& key) const { return prefix + ":inflight:" + key; }
  std::string worker(const std::string& name) const { return prefix + ":worker:" + name; }  // heartbeat
};

}  // namespace vinci::queue
