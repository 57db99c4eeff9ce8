// The serving side of the queue: one consumer of the group, judging one job at a time.
//
// Delivery is at least once: a job stays pending until its result is written, and a pending job
// idle past the visibility timeout (its worker died or hung) is claimed again by any worker. Results
// are written once per key (SET NX in the same script as the XACK), so a job evaluated twice still
// has one result. A job handed out more than max_deliveries times ends as runtime_error/worker_lost
// instead of killing workers forever. The evaluation is a callback, so the queue is tested without
// a judge and a judge is plugged in without the queue knowing it.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "queue/job_protocol.h"
#include "queue/queue_layout.h"
#include "queue/redis_connection.h"
#include "queue/worker_evaluator.h"

namespace vinci::queue {

struct WorkerOptions {
  std::string name;  // the consumer's name: unique among the group's live workers (host and slot)
  QueueLayout layout;
  // How long a job may stay pending without news before another worker takes it over. A job being
  // evaluated is renewed every third of it (queue/job_lease.h), so this bounds how long a dead
  // worker's job waits, not how long an evaluation may take.
  std::chrono::milliseconds visibility_timeout{std::chrono::seconds(60)};
  int max_deliveries = 3;
  std::chrono::milliseconds block{1000};  // how long step() waits for a new job
  std::chrono::seconds heartbeat_ttl{60};
  // The evaluator this worker judges with: it reads that evaluator's stream (the layout's tag is set
  // from it) and announces it in its heartbeat. None: the untagged stream, every job (tests).
  std::optional<WorkerEvaluator> evaluator;
  std::string sandbox;  // how this host isolates candidates, announced for the status
  // Jobs taken ahead of the one being judged and handed to the Prepare callback, so that their
  // builds run while the GPU times the current one. Each is leased like the current one; a worker
  // that stops hands them back (release_held) and one that dies leaves them to the visibility timeout.
  size_t hold_ahead = 0;
};

enum class StepOutcome {
  idle,         // no job came within the block time
  evaluated,    // a result was written
  duplicate,    // the key had a result already (another delivery finished first): acknowledged only
  worker_lost,  // delivered too often: ended as runtime_error/worker_lost
  refused,      // a malformed or foreign entry, logged and acknowledged so it is not delivered again
  failed,       // the evaluator threw: left pending, to be claimed again after the visibility timeout
  forwarded,    // keyed for another evaluator: moved to that evaluator's stream, not judged here
  released,     // the evaluation was stopped (JobReleased): handed back at once for another worker
};

struct WorkerStats {
  long evaluated = 0, duplicates = 0, worker_lost = 0, refused = 0, failed = 0, forwarded = 0, released = 0;
};

// What an Evaluate callback throws instead of a result. JobRefused: this job cannot be judged as its
// key says by any worker (its settings give another fingerprint): logged and acknowledged, like a
// malformed entry. JobReleased: the worker is stopping mid-evaluation; the job goes back unjudged.
class JobRefused : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
class JobReleased : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Evaluate = std::function<eval::Result(const QueueJob&)>;
// Told of a job taken ahead, which Evaluate will be given later (or never, when the worker stops):
// best effort, it must not throw or wait long.
using Prepare = std::function<void(const QueueJob&)>;

// HOST:PID, unique among the live workers of every host.
std::string default_worker_name();

class QueueWorker {
 public:
  QueueWorker(RedisConnection& redis, WorkerOptions options, Evaluate evaluate, Prepare prepare = {});
  ~QueueWorker();
  // One job at most: one taken ahead first, else a claimed-over one, else a new one; then, before
  // judging it, takes up to hold_ahead jobs ahead. Refreshes the heartbeat.
  StepOutcome step();
  const WorkerStats& stats() const { return stats_; }
  std::string stream() const { return options_.layout.stream(); }
  // A worker that stops cleanly hands back the jobs it took ahead and takes its heartbeat away, so
  // the status stops listing it at once.
  void sign_off();
  size_t held_ahead() const { return ahead_.size(); }

 private:
  struct Entry;
  struct Held;
  StepOutcome serve_one();
  std::optional<Entry> next_entry(bool block);
  // A job as its entry says: refused, forwarded, a duplicate or worker_lost end here (their outcome
  // returned, held left empty); a job to judge comes back in held, leased.
  StepOutcome admit(const Entry& entry, std::unique_ptr<Held>& held);
  StepOutcome judge(Held& held);
  void take_ahead();
  void release_held();
  void heartbeat();
  void acknowledge(const std::string& id);
  bool write(const ResultRecord& record, const std::string& id);  // false: a result was there already
  void forward(const Entry& entry, const QueueJob& job);
  void release(const std::string& id);

  RedisConnection& redis_;
  WorkerOptions options_;
  Evaluate evaluate_;
  Prepare prepare_;
  std::deque<std::unique_ptr<Held>> ahead_;
  WorkerStats stats_;
  std::string claim_cursor_ = "0-0";
};

}  // namespace vinci::queue
