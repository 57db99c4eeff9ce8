#include "queue/queue_submitter.h"

#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/files.h"
#include "core/setup_error.h"
#include "queue/job_settings.h"

namespace vinci::queue {

using Clock = std::chrono::steady_clock;

namespace {

// The verdict is the worker's; the names are this run's, since another run may have queued the same
// sources under other names.
void name_as(eval::Result& r, const eval::Job& j) {
  r.task = j.task.id;
  r.level = j.task.level;
  r.task_number = j.task.number;
  r.task_name = j.task.name;
  r.candidate = j.candidate.file.string();
  r.candidate_hash = j.candidate.hash;
}

}  // namespace

std::optional<WorkerEvaluator> choose_evaluator(const std::vector<WorkerStatus>& workers, const std::string& device) {
  std::string kind = device;
  if (kind == "auto") {
    kind = "cpu";
    for (const auto& w : workers)
      if (w.evaluator && w.evaluator->device_kind == "cuda") kind = "cuda";
  }
  std::map<std::string, std::pair<WorkerEvaluator, int>> found;  // by tag: the evaluator and its workers
  for (const auto& w : workers)
    if (w.evaluator && w.evaluator->device_kind == kind) {
      auto [it, _] = found.try_emplace(w.evaluator->tag(), *w.evaluator, 0);
      ++it->second.second;
    }
  if (found.empty()) return std::nullopt;
  if (found.size() > 1) {
    std::vector<std::string> seen;
    for (const auto& [tag, e] : found)
      seen.push_back(fmt::format("{} ({} worker{})", e.first.describe(), e.second, e.second == 1 ? "" : "s"));
    throw core::SetupError(fmt::format(
        "the queue's live {} workers bring {} evaluators: {}; a run's results must be one evaluator's, so give each "
        "its own queue (another database in the URL) or stop the others",
        kind, found.size(), fmt::join(seen, "; ")));
  }
  return found.begin()->second.first;
}

QueueSubmitter::QueueSubmitter(RedisConnection& redis, eval::EvalConfig config, QueueLayout layout)
    : redis_(redis), config_(std::move(config)), layout_(std::move(layout)) {
  auto next_note = Clock::now();
  for (;;) {
    const auto workers = live_workers(redis_, layout_);
    if (auto e = choose_evaluator(workers, config_.device)) {
      evaluator_ = *e;
      for (const auto& w : workers)
        if (w.evaluator == evaluator_) {
          sandbox_ = w.sandbox;
          break;
        }
      break;
    }
    if (Clock::now() >= next_note) {
      spdlog::info("waiting for a {} worker on {}: start one with `vinci worker --queue URL --device {}`",
                   config_.device == "auto" ? "" : config_.device, redis_.url().redacted(),
                   config_.device == "auto" ? "cpu|cuda" : config_.device);
      next_note = Clock::now() + std::chrono::seconds(30);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  layout_ = layout_.for_evaluator(evaluator_.tag());
}

void QueueSubmitter::stop_at(std::optional<Clock::time_point> deadline, const std::atomic<bool>* interrupt) {
  deadline_ = deadline;
  interrupt_ = interrupt;
}

bool QueueSubmitter::stopped() const {
  return (interrupt_ && interrupt_->load()) || (deadline_ && Clock::now() >= *deadline_);
}

std::vector<eval::Result> QueueSubmitter::run(const std::vector<eval::Job>& jobs,
                                              const std::function<void(const eval::Result&)>& on_result) {
  JobQueue queue(redis_, layout_);
  const std::string fingerprint = config_.fingerprint();
  std::mt19937_64 nonces(std::random_device{}());
  std::map<std::string, std::vector<size_t>> by_key;  // a pair given twice is queued once
  std::vector<std::string> keys;
  std::set<std::string> stored;  // answered by the store at submission
  for (size_t i = 0; i < jobs.size(); ++i) {
    const eval::Job& j = jobs[i];
    QueueJob q;
    q.task_id = j.task.id;
    q.task_source = core::read_file(j.task.file);
    q.candidate_name = j.candidate.file.string();
    q.candidate_source = j.candidate.source;
    q.settings = job_settings(config_, j.fresh ? fmt::format("{:016x}", nonces()) : "");
    q.evaluator = evaluator_.identity(settings_fingerprint(config_, q.settings));
    q.key = result_key(q.task_source, q.candidate_source, q.evaluator);
    auto& indices = by_key[q.key];
    indices.push_back(i);
    if (indices.size() > 1) continue;
    keys.push_back(q.key);
    if (queue.submit(q) == SubmitOutcome::done) {
      stored.insert(q.key);
      ++stats_.from_store;
    }
  }

  std::vector<eval::Result> results(jobs.size());
  std::set<std::string> answered;
  const auto deliver = [&](const ResultRecord& record) {
    if (!answered.insert(record.key).second) return;
    for (size_t i : by_key.at(record.key)) {
      eval::Result r = record.result;
      name_as(r, jobs[i]);
      if (stored.contains(record.key)) r.cached = true;
      results[i] = std::move(r);
      ++stats_.results;
      if (on_result) on_result(results[i]);
    }
  };
  std::vector<std::string> missing = keys;
  while (!missing.empty() && !stopped()) {
    queue.wait(missing, std::chrono::milliseconds(500), deliver);
    std::erase_if(missing, [&](const std::string& k) { return answered.contains(k); });
  }
  for (const auto& key : missing)
    for (size_t i : by_key.at(key)) {
      eval::Result& r = results[i];
      name_as(r, jobs[i]);
      r.device = evaluator_.device_name;
      r.verdict = eval::Verdict::timeout;
      r.reason = "not_evaluated";
      r.message = fmt::format(
          "the run stopped (deadline or interrupt) before a queue worker returned this result; the job stays "
          "queued in {}, and a later run finds its result in the store",
          layout_.stream());
      if (on_result) on_result(r);
    }
  return results;
}

}  // namespace vinci::queue
