// The queue as the judge's callers see it: eval::Jobs in, eval::Results out, in job order.
//
// The submitting side as the judge's callers see it: eval::Jobs in, eval::Results out, one per job in
// its order, each handed to on_result as it lands, as a local EvaluatorPool gives them; judged by the
// queue's workers of one evaluator, chosen from their heartbeats. Jobs are keyed for that evaluator
// under the submitter's settings, so the key, and the result stored under it, say who judged what.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/config.h"
#include "eval/pool.h"
#include "queue/job_queue.h"
#include "queue/queue_status.h"
#include "queue/redis_connection.h"
#include "queue/worker_evaluator.h"

namespace vinci::queue {

// The evaluator of the live workers of a device (cpu, cuda, or auto: cuda when a GPU worker is live);
// none while no such worker is live. Throws core::SetupError, naming them, when they bring several:
// a run's results must all be one evaluator's.
std::optional<WorkerEvaluator> choose_evaluator(const std::vector<WorkerStatus>& workers, const std::string& device);

struct SubmitterStats {
  int results = 0, from_store = 0;  // from_store: answered by a result the store held already
};

class QueueSubmitter {
 public:
  // Waits until a worker of config.device is live (a line in the log every 30 s), or throws what
  // choose_evaluator throws.
  QueueSubmitter(RedisConnection& redis, eval::EvalConfig config, QueueLayout layout = {});

  const WorkerEvaluator& evaluator() const { return evaluator_; }
  const std::string& sandbox() const { return sandbox_; }  // as the evaluator's first worker announced it

  std::vector<eval::Result> run(const std::vector<eval::Job>& jobs,
                                const std::function<void(const eval::Result&)>& on_result);
  // As EvaluatorPool::stop_at: run() stops waiting at deadline or once *interrupt is true; the jobs
  // without a result end as timeout/not_evaluated. They stay queued, and a later run of the same keys
  // finds their results in the store.
  void stop_at(std::optional<std::chrono::steady_clock::time_point> deadline, const std::atomic<bool>* interrupt);
  SubmitterStats stats() const { return stats_; }

 private:
  bool stopped() const;

  RedisConnection& redis_;
  eval::EvalConfig config_;
  QueueLayout layout_;
  WorkerEvaluator evaluator_;
  std::string sandbox_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  const std::atomic<bool>* interrupt_ = nullptr;
  SubmitterStats stats_;
};

}  // namespace vinci::queue
