// Where the queue keeps things in Redis, under one prefix.
//
// Where the queue keeps things in Redis, under one prefix so that several queues (or other users)
// can share a server. Submitters and workers must agree on it; nothing else names these keys.
#pragma once

#include <string>

namespace vinci::queue {

struct QueueLayout {
  std::string prefix = "vinci";
  // The evaluator whose jobs the stream holds (WorkerEvaluator::tag()): each has a stream of its own,
  // so a job reaches only workers that can judge it. Empty: the untagged stream (the queue's own tests).
  std::string evaluator;

  QueueLayout for_evaluator(std::string tag) const {
    QueueLayout l = *this;
    l.evaluator = std::move(tag);
    return l;
  }
  std::string stream() const { return evaluator.empty() ? prefix + ":jobs" : prefix + ":jobs:" + evaluator; }
  std::string tagged_streams() const { return prefix + ":jobs:*"; }  // a SCAN pattern
  std::string group() const { return "workers"; }                    // the consumer group every worker joins
  std::string results() const { return prefix + ":results"; }        // one entry per result written: a wake-up
  std::string result(const std::string& key) const { return prefix + ":result:" + key; }  // the store
  std::string in_flight(const std::string& key) const { return prefix + ":inflight:" + key; }
  std::string worker(const std::string& name) const { return prefix + ":worker:" + name; }  // heartbeat
};

}  // namespace vinci::queue
