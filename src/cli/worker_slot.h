// One GPU (or CPU slot) of a `vinci worker` host: a local judge serving queued jobs.
//
// One GPU (or CPU slot) of a `vinci worker` host: the local judge of `vinci eval`, an EvaluatorPool of
// its own on that device, judging queued jobs under each job's settings and the host's limits. The
// pool is made again when a job comes with other settings, which is rare: a run's jobs share theirs.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "eval/config.h"
#include "eval/pool.h"
#include "queue/job_files.h"
#include "queue/job_protocol.h"
#include "queue/worker_evaluator.h"

namespace vinci::cli {

class WorkerSlot {
 public:
  // host: the device (one GPU through gpu_share_index/count), cache and limits. *release turning true
  // stops an evaluation in flight, whose job is then released (queue::JobReleased).
  WorkerSlot(eval::EvalConfig host, std::string name, const std::atomic<bool>* release);

  queue::WorkerEvaluator evaluator() const;
  std::string sandbox() { return pool_->sandbox(); }
  // Throws queue::JobRefused when the job's settings do not give the fingerprint its key names,
  // queue::JobReleased when stopped, std::runtime_error when the judge on this host failed.
  eval::Result evaluate(const queue::QueueJob& job);
  // A job taken ahead (queue::Prepare): its files written and its build started, which evaluate()
  // then takes. Best effort: a job this slot cannot prepare is left for evaluate() to judge or refuse.
  void prepare(const queue::QueueJob& job);

 private:
  // The job's task and candidate written under this slot's folder (std::invalid_argument for a job
  // whose files cannot be named).
  std::unique_ptr<queue::JobFiles> files_for(const queue::QueueJob& job) const;

  eval::EvalConfig host_;
  std::string name_;
  const std::atomic<bool>* release_;
  std::unique_ptr<eval::EvaluatorPool> pool_;
  std::map<std::string, std::unique_ptr<queue::JobFiles>> prepared_;  // by job key, until evaluated
};

}  // namespace vinci::cli
