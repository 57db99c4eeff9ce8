// Where a command's kernels are judged: on this host or by the workers of a Redis queue.
//
// Where a command's kernels are judged: on this host (an EvaluatorPool) or by the workers of a Redis
// queue (--queue URL, docs/distributed.md). vinci eval, bench-model and train rl call this one seam
// and get the same results, one per job in its order, either way.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agents/kernel_evaluator.h"
#include "eval/config.h"
#include "eval/pool.h"

namespace vinci::cli {

class Evaluations : public agents::KernelEvaluator {
 public:
  // One result per job, in order; on_result sees each as it lands, one at a time.
  virtual std::vector<eval::Result> run(const std::vector<eval::Job>& jobs,
                                        const std::function<void(const eval::Result&)>& on_result) = 0;
  // At deadline, or once *interrupt is true, run() stops; the jobs left end as timeout/not_evaluated.
  virtual void stop_at(std::optional<std::chrono::steady_clock::time_point> deadline,
                       const std::atomic<bool>* interrupt) = 0;
  virtual std::string device_kind() const = 0;  // cpu | cuda
  virtual std::string sandbox() = 0;            // how candidates are isolated where they run
  virtual eval::PoolStats stats() const = 0;    // what this side knows of: results, cache hits, builds
  virtual std::string describe() const = 0;     // where the evaluations run, for the log

  // The agents' interface; each result goes to what report_to gave.
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override { return run(jobs, report_); }
  void report_to(std::function<void(const eval::Result&)> on_result) { report_ = std::move(on_result); }

 private:
  std::function<void(const eval::Result&)> report_;
};

// A local EvaluatorPool for an empty queue_url, else the queue's submitter, which waits for a worker
// of config.device to be live. A URL that does not parse, an unreachable server or refused credentials
// throw core::SetupError (exit code 4) before anything is submitted.
std::unique_ptr<Evaluations> open_evaluations(const eval::EvalConfig& config, const std::string& queue_url);

// --queue URL, the same words in every command that takes it.
void add_queue_option(CLI::App& app, std::string& queue_url);

// The queue's side, in queue_evaluations.cpp, or in queue_missing.cpp where vinci is built without
// hiredis (it then throws core::SetupError saying so).
std::unique_ptr<Evaluations> open_queue_evaluations(const eval::EvalConfig& config, const std::string& queue_url);

}  // namespace vinci::cli
