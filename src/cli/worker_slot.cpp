#include "cli/worker_slot.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "eval/task.h"
#include "queue/job_files.h"
#include "queue/job_settings.h"
#include "queue/queue_worker.h"

namespace vinci::cli {

WorkerSlot::WorkerSlot(eval::EvalConfig host, std::string name, const std::atomic<bool>* release)
    : host_(std::move(host)), name_(std::move(name)), release_(release) {
  host_.resolve();
  pool_ = std::make_unique<eval::EvaluatorPool>(host_);
  pool_->stop_at(std::nullopt, release_);
}

queue::WorkerEvaluator WorkerSlot::evaluator() const {
  const eval::EvaluatorIdentity id = pool_->identity();
  return {pool_->device_kind(), id.device_name, id.torch_version, id.evaluator_version};
}

eval::Result WorkerSlot::evaluate(const queue::QueueJob& job) {
  eval::EvalConfig judged;
  try {
    judged = queue::judged_config(host_, job.settings);
  } catch (const std::invalid_argument& e) {
    throw queue::JobRefused(e.what());
  }
  const std::string fingerprint = queue::settings_fingerprint(judged, job.settings);
  if (fingerprint != job.evaluator.config_fingerprint)
    throw queue::JobRefused(fmt::format(
        "its settings give the fingerprint {}, its key names {}: the submitter's vinci carries settings this "
        "worker's does not read (run one version on both sides)",
        fingerprint, job.evaluator.config_fingerprint));
  if (pool_->config().fingerprint() != judged.fingerprint()) {
    spdlog::info("{}: a job with other settings than the last one's; starting a judge for them", name_);
    pool_.reset();  // its judges go before the new ones start
    pool_ = std::make_unique<eval::EvaluatorPool>(judged);
    pool_->stop_at(std::nullopt, release_);
  }
  std::unique_ptr<queue::JobFiles> files;
  if (auto it = prepared_.find(job.key); it != prepared_.end()) {
    files = std::move(it->second);
    prepared_.erase(it);
  } else {
    try {
      files = files_for(job);
    } catch (const std::invalid_argument& e) {
      throw queue::JobRefused(e.what());
    }
  }
  eval::Result r = pool_->run({files->job()}, {}).at(0);
  if (r.reason == "not_evaluated") throw queue::JobReleased("the worker is stopping");
  // The host failed, not the candidate (as the pool, which never caches these): another worker
  // should judge it rather than the store keep this host's failure for good.
  if (r.verdict == eval::Verdict::runtime_error &&
      (r.reason == "worker_error" || r.reason == "build_not_started" || r.reason == "sandbox"))
    throw std::runtime_error(fmt::format("the judge on this host failed ({}): {}", r.reason, r.message.substr(0, 300)));
  return r;
}

std::unique_ptr<queue::JobFiles> WorkerSlot::files_for(const queue::QueueJob& job) const {
  return std::make_unique<queue::JobFiles>(host_.cache_dir / "queue-jobs" / eval::flat_id(name_), job);
}

void WorkerSlot::prepare(const queue::QueueJob& job) {
  try {
    const eval::EvalConfig judged = queue::judged_config(host_, job.settings);
    if (judged.fingerprint() != pool_->config().fingerprint()) return;  // its pool is not made yet
    if (prepared_.count(job.key)) return;                               // its files are written and its build started
    // A held job that was never evaluated (released) leaves its files: a few are kept, the rest go.
    while (prepared_.size() >= 4) prepared_.erase(prepared_.begin());
    auto files = files_for(job);
    pool_->prepare(files->job());
    prepared_[job.key] = std::move(files);
  } catch (const std::exception& e) {
    spdlog::warn("{}: could not prepare job {} ({} on {}) ahead: {}", name_, job.key, job.candidate_name, job.task_id,
                 e.what());
  }
}

}  // namespace vinci::cli
