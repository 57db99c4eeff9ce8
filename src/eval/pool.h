// The evaluator pool: parallel builds, one judge per GPU (or one on the CPU), the caches.
//
// The evaluator pool: parallel builds on the CPU cores, one worker per visible GPU (or one CPU
// worker), a queue between them, and the result and baseline caches.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/cache.h"
#include "eval/candidate.h"
#include "eval/config.h"
#include "eval/environment.h"
#include "eval/result.h"
#include "eval/result_key.h"
#include "eval/task.h"

namespace vinci::eval {

struct Job {
  Task task;
  Candidate candidate;
  bool fresh = false;  // measure again even when the result cache holds this pair (verifier repeats)
};

struct PoolStats {
  int results = 0, result_cache_hits = 0, worker_restarts = 0;
  int builds = 0;  // candidates imported and compiled (by the build step, or on the CPU by their runner)
};

class WorkerClient;
class BuildStep;
struct BaselineReply;
struct BuildReply;  // the build step's outcome (eval/build_step.h)

class EvaluatorPool {
 public:
  // Throws std::runtime_error when the device asked for is not there (e.g. cuda without a GPU).
  explicit EvaluatorPool(EvalConfig config);
  ~EvaluatorPool();

  const EvalConfig& config() const { return config_; }
  const std::string& device_name() const { return device_name_; }
  const std::string& device_kind() const { return device_kind_; }  // cpu | cuda
  int workers() const { return static_cast<int>(worker_specs_); }
  // What its results are keyed by besides the two sources: the queue's workers announce it, so that
  // submitters key their jobs as this pool would (queue/worker_evaluator.h).
  EvaluatorIdentity identity() const;

  // Evaluates every job; on_result runs (one at a time) as each result is ready. Jobs left when
  // the run stops early (stop_at) end as timeout/not_evaluated, are reported through on_result
  // like the others and are never cached.
  std::vector<Result> run(const std::vector<Job>& jobs, const std::function<void(const Result&)>& on_result);
  PoolStats stats() const;
  // Starts the build step of a job a later run() will be given, in a thread of its own, so that
  // run() takes that outcome instead of building the job again: a queue worker builds the job it
  // holds next while its GPU times the current one. Does nothing where the build step only checks
  // (the CPU: the runner imports) or the result cache answers the job.
  void prepare(const Job& job);

  // Stops run() at deadline, or as soon as *interrupt turns true (a signal handler's flag): the
  // evaluations in flight are killed, the rest are not started.
  void stop_at(std::optional<std::chrono::steady_clock::time_point> deadline, const std::atomic<bool>* interrupt);
  // How candidates are isolated on this host (the judge's sandbox probe), e.g. "bwrap+seccomp".
  std::string sandbox();

 private:
  struct Shared;
  Result evaluate(const Job& job, const BuildReply& build, WorkerClient& worker, Shared& shared);
  std::optional<BaselineReply> baseline(const Task& task, WorkerClient& worker, Shared& shared, Result& failure);
  std::string result_key(const Job& job) const;
  void sweep() const;  // keeps the cache within config_.cache_budget_bytes
  bool build_step_imports() const;
  std::filesystem::path candidate_copy(const Job& job) const;
  // The job's result from the result cache (use_cache), as this job's; none on a miss or an
  // unreadable entry.
  std::optional<Result> cached_result(const Job& job, const std::string& key) const;
  // candidate_copy(job), written there first when it is not.
  std::filesystem::path stored_copy(const Job& job) const;
  std::filesystem::path candidate_log(const Job& job, const char* step) const;

  EvalConfig config_;
  Environment env_;
  std::string evaluator_version_;  // a hash of the worker's Python sources
  std::string device_kind_;        // cpu | cuda
  std::string device_name_;
  size_t worker_specs_ = 1;
  std::vector<std::unique_ptr<WorkerClient>> workers_;
  std::vector<std::unique_ptr<BuildStep>> builders_;  // kept across run() calls: each holds a warm build server
  struct Prepared;
  std::optional<BuildReply> take_prepared(const Job& job);
  std::unique_ptr<Prepared> prepared_;  // prepare()'s builds, their own build server
  JsonCache results_, baselines_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  const std::atomic<bool>* interrupt_ = nullptr;
  mutable std::mutex stats_mu_;
  PoolStats stats_;
};

}  // namespace vinci::eval
