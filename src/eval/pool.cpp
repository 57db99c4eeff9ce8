#include "eval/pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/files.h"
#include "core/hash.h"
#include "eval/build_step.h"
#include "eval/cache_janitor.h"
#include "eval/judge_protocol.h"
#include "eval/result_key.h"
#include "eval/worker_client.h"

namespace vinci::eval {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The worker's sources: a stored result or baseline is reused only by the evaluator that made it.
static std::string evaluator_version(const fs::path& worker_path) {
  std::string all;
  std::error_code ec;
  for (const char* package : {"vinci_worker", "vinci_runner"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(worker_path / package, ec))
      if (e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) all += f.filename().string() + '\0' + core::read_file(f) + '\0';
  }
  return core::content_hash(all);
}

static double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct EvaluatorPool::Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> ready;  // job indices whose build succeeded, waiting for a worker
  size_t builds_left = 0;
  std::map<size_t, BuildOutcome> builds;
  std::map<std::string, std::unique_ptr<std::mutex>> baseline_locks;
  std::mutex result_mu;
};

// prepare()'s builds: one build server of their own (a BuildStep serves one thread), one build at a
// time, and the few outcomes not yet taken, keyed by what the build request names (the candidate's
// content-addressed copy and the task's file).
struct EvaluatorPool::Prepared {
  static constexpr size_t kKept = 8;  // a released job's outcome is dropped after this many more
  std::unique_ptr<BuildStep> step;
  std::mutex step_mu;
  std::mutex mu;  // guards outcomes
  std::deque<std::pair<std::string, std::shared_future<BuildOutcome>>> outcomes;

  static std::string key(const fs::path& copy, const Task& task) { return copy.string() + '\n' + task.file.string(); }
};

EvaluatorPool::EvaluatorPool(EvalConfig config)
    : config_(std::move(config)), results_(fs::path()), baselines_(fs::path()) {
  config_.resolve();
  env_ = probe_environment(config_.python);
  if (env_.torch_version.empty())
    throw std::runtime_error(
        fmt::format("torch is not installed for {} (run `make install-deps`, or set VINCI_PYTHON "
                    "to a python that has torch)",
                    config_.python));
  device_kind_ = config_.device == "auto" ? (env_.gpus.empty() ? "cpu" : "cuda") : config_.device;
  if (device_kind_ != "cpu" && device_kind_ != "cuda")
    throw std::runtime_error(fmt::format("unknown device '{}': use cpu, cuda or auto", config_.device));
  if (device_kind_ == "cuda" && env_.gpus.empty())
    throw std::runtime_error(
        "--device cuda: no NVIDIA GPU is visible (none under /proc/driver/nvidia/gpus, or "
        "CUDA_VISIBLE_DEVICES hides them); use --device cpu");
  device_name_ = device_kind_ == "cpu" ? "cpu" : env_.gpus.front();
  sweep();
  evaluator_version_ = evaluator_version(config_.worker_path);
  results_ = JsonCache(config_.cache_dir / "results");
  baselines_ = JsonCache(config_.cache_dir / "baselines");

  std::vector<std::optional<std::string>> gpus;
  if (device_kind_ == "cuda") {
    std::vector<std::string> ids;
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',') && ids.size() < env_.gpus.size()) ids.push_back(item);
    } else {
      for (size_t i = 0; i < env_.gpus.size(); ++i) ids.push_back(std::to_string(i));
    }
    const auto count = static_cast<size_t>(std::max(1, config_.gpu_share_count));
    const auto index = static_cast<size_t>(std::max(0, config_.gpu_share_index));
    for (size_t p = 0; p < ids.size(); ++p)
      if (ids.size() < count ? p == index % ids.size() : p % count == index % count) gpus.emplace_back(ids[p]);
  } else {
    gpus.emplace_back(std::nullopt);
  }
  worker_specs_ = gpus.size();
  for (size_t i = 0; i < gpus.size(); ++i) {
    WorkerSpec spec;
    spec.device = device_kind_;
    spec.gpu = gpus[i];
    const std::string tag = gpus[i] ? "gpu" + *gpus[i] : "cpu";
    spec.log = config_.cache_dir / "logs" / fmt::format("judge-{}-{}.log", tag, ::getpid());
    workers_.push_back(std::make_unique<WorkerClient>(spec, config_));
  }
}

EvaluatorPool::~EvaluatorPool() {
  if (prepared_) {
    prepared_->step->kill_async();  // a build in flight ends at once
    for (auto& [key, outcome] : prepared_->outcomes) outcome.wait();
  }
  for (auto& w : workers_) w->restart();
}

void EvaluatorPool::prepare(const Job& job) {
  if (!build_step_imports()) return;
  if (!job.fresh && cached_result(job, result_key(job))) return;
  const fs::path copy = stored_copy(job);
  if (!prepared_) {
    // Made here, in the thread that also calls run(), so the watcher and the destructor never see
    // it half made; its id follows the builders'.
    prepared_ = std::make_unique<Prepared>();
    prepared_->step = std::make_unique<BuildStep>(config_, std::max(1, config_.build_jobs), false);
  }
  Prepared& p = *prepared_;
  const fs::path log = candidate_log(job, "build");
  std::shared_future<BuildOutcome> outcome = std::async(std::launch::async, [this, &p, copy, task = job.task, log] {
                                               std::lock_guard lock(p.step_mu);
                                               BuildOutcome b = p.step->run(copy, task, log);
                                               std::lock_guard s(stats_mu_);
                                               ++stats_.builds;
                                               return b;
                                             }).share();
  std::vector<std::shared_future<BuildOutcome>> dropped;
  {
    std::lock_guard lock(p.mu);
    p.outcomes.emplace_back(Prepared::key(copy, job.task), std::move(outcome));
    for (; p.outcomes.size() > Prepared::kKept; p.outcomes.pop_front())
      dropped.push_back(std::move(p.outcomes.front().second));
  }
  // The last reference to an std::async future waits for its task: dropping an outcome nobody took
  // waits for that build, here and not under p.mu, where take_prepared() would wait too. Builds go
  // one at a time and the dropped one is the oldest, so it has finished or is the one running.
}

std::optional<BuildOutcome> EvaluatorPool::take_prepared(const Job& job) {
  if (!prepared_) return std::nullopt;
  std::shared_future<BuildOutcome> outcome;
  {
    std::lock_guard lock(prepared_->mu);
    auto& all = prepared_->outcomes;
    const std::string key = Prepared::key(candidate_copy(job), job.task);
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& o) { return o.first == key; });
    if (it == all.end()) return std::nullopt;
    outcome = it->second;
    all.erase(it);
  }
  // Only a success is taken: a failure may be the kill of a stopping run, not the candidate's, and
  // is asked again of the run's own build step.
  BuildOutcome b = outcome.get();
  if (!b.ok) return std::nullopt;
  return b;
}

void EvaluatorPool::stop_at(std::optional<Clock::time_point> deadline, const std::atomic<bool>* interrupt) {
  deadline_ = deadline;
  interrupt_ = interrupt;
}

// The judge's description of itself (starting it if needed); a hello out of protocol is a judge that
// cannot be used, as one that does not start.
static HelloReply hello_of(WorkerClient& worker) {
  Parsed<HelloReply> hello = hello_reply_from_json(worker.info());
  if (!hello.value) throw std::runtime_error("the judge's hello is out of protocol: " + hello.error);
  return std::move(*hello.value);
}

std::string EvaluatorPool::sandbox() { return workers_.empty() ? "" : hello_of(*workers_.front()).sandbox; }

void EvaluatorPool::sweep() const {
  if (!config_.cache_budget_bytes) return;
  const SweepReport swept = sweep_cache(config_.cache_dir, {.budget_bytes = config_.cache_budget_bytes});
  if (swept.entries()) spdlog::info("cache: {}", swept.describe());
  if (!swept.under_budget())
    spdlog::warn("cache {} stays over its budget: everything left was used in the last 10 minutes", swept.describe());
}

PoolStats EvaluatorPool::stats() const {
  std::lock_guard lock(stats_mu_);
  PoolStats s = stats_;
  s.worker_restarts = 0;
  for (const auto& w : workers_) s.worker_restarts += w->restarts();
  return s;
}

EvaluatorIdentity EvaluatorPool::identity() const {
  return {config_.fingerprint(), device_name_, env_.torch_version, evaluator_version_};
}

std::string EvaluatorPool::result_key(const Job& job) const {
  return eval::result_key(core::read_file(job.task.file), job.candidate.source, identity());
}

static Result base_result(const Job& job, const std::string& device) {
  Result r;
  r.task = job.task.id;
  r.level = job.task.level;
  r.task_number = job.task.number;
  r.task_name = job.task.name;
  r.candidate = job.candidate.file.string();
  r.candidate_hash = job.candidate.hash;
  r.device = device;
  return r;
}

// A reply out of protocol is the judge's error, never the candidate's; it is not cached.
static void apply_malformed(Result& r, const std::string& error) {
  r.verdict = Verdict::runtime_error;
  r.reason = "worker_error";
  r.message = fmt::format("the judge's reply is malformed: {}", error);
}

// Fills a result from a failed worker reply: the judge's own classification, or what the pool
// saw happen to the judge.
static void apply_failure(Result& r, const WorkerReply& reply, const char* timeout_reason) {
  switch (reply.kind) {
    case WorkerReply::Kind::ok: return;
    case WorkerReply::Kind::failed: {
      const Parsed<JudgeFailure> failure = failure_from_json(reply.body);
      if (!failure.value) return apply_malformed(r, failure.error);
      const JudgeFailure& f = *failure.value;
      r.verdict = f.verdict;
      r.reason = f.reason;
      r.message = f.message;
      if (f.trials_passed) r.trials_passed = *f.trials_passed;
      if (f.max_abs_diff) r.max_abs_diff = f.max_abs_diff;
      if (f.mean_abs_diff) r.mean_abs_diff = f.mean_abs_diff;
      if (f.timing) r.timing = f.timing;
      for (const auto& [phase, seconds] : f.phase_seconds) r.phase_seconds[phase] = seconds;
      return;
    }
    case WorkerReply::Kind::timeout:
      r.verdict = Verdict::timeout;
      r.reason = timeout_reason;
      r.message = reply.description;
      return;
    case WorkerReply::Kind::crashed:
      if (reply.signal == SIGXCPU) {
        r.verdict = Verdict::timeout;
        r.reason = "cpu_time";
      } else {
        r.verdict = Verdict::runtime_error;
        r.reason = reply.signal ? "worker_crashed" : "worker_exited";
      }
      r.message = reply.description;
      return;
  }
}

std::optional<BaselineReply> EvaluatorPool::baseline(const Task& task, WorkerClient& worker, Shared& shared,
                                                     Result& failure) {
  const std::string task_source = core::read_file(task.file);
  BaselineRequest req;
  req.path = fs::absolute(task.file).string();
  req.scale = config_.scale;
  req.config = config_.worker_json();
  const auto [timing, numerics] = baseline_settings(req.config);
  const std::string key = core::content_hash({task_source, std::to_string(config_.scale), timing, numerics,
                                              std::to_string(config_.seed), config_.compile_baseline ? "c" : "",
                                              device_name_, env_.torch_version, evaluator_version_, "baseline-v5"});
  std::mutex* lock_ptr;
  {
    std::lock_guard lock(shared.mu);
    auto& slot = shared.baseline_locks[key];
    if (!slot) slot = std::make_unique<std::mutex>();
    lock_ptr = slot.get();
  }
  std::lock_guard task_lock(*lock_ptr);
  if (config_.reuse_baselines) {
    if (auto hit = baselines_.get(key)) {
      if (auto stored = baseline_reply_from_json(*hit); stored.value) return stored.value;  // else a miss
    }
  }
  const WorkerReply r = worker.request(to_json(req), config_.baseline_timeout * 2);
  Parsed<BaselineReply> timed;
  if (r.kind == WorkerReply::Kind::ok) {
    timed = baseline_reply_from_json(r.body);
    if (!timed.value) apply_malformed(failure, timed.error);
  } else {
    apply_failure(failure, r, "baseline_timeout");
  }
  if (!timed.value) {
    if (failure.verdict != Verdict::invalid_task) {
      failure.message = "timing the reference failed: " + failure.message;
      failure.verdict = Verdict::invalid_task;
    }
    return std::nullopt;
  }
  baselines_.put(key, to_json(*timed.value));
  return timed.value;
}

// Every phase of one candidate (import, compiles, correctness, timing) is bounded by the judge; this
// bounds the judge.
static std::chrono::seconds evaluate_timeout(const EvalConfig& c) {
  return c.import_timeout + c.compile_timeout * 4 + c.run_timeout * 3 + c.baseline_timeout + std::chrono::seconds(120);
}

static void apply_correct(Result& r, const EvaluateReply& m) {
  r.verdict = Verdict::correct;
  r.reason.clear();
  r.trials = m.trials;
  r.trials_passed = m.trials_passed;
  r.max_abs_diff = m.max_abs_diff;
  r.mean_abs_diff = m.mean_abs_diff;
  r.timing = m.timing;
  r.timing_check = m.external;
  r.custom_launches = m.custom_launches;
  r.coverage = m.coverage;
  r.profile = m.profile;
  r.flags = m.flags;
  r.skipped_trials = m.skipped_trials;
  r.warnings.insert(r.warnings.end(), m.warnings.begin(), m.warnings.end());
  for (const auto& [phase, seconds] : m.phase_seconds) r.phase_seconds[phase] = seconds;
  // The judge's speedups are against the reference timed beside the candidate, not the cached baseline
  // (red-team round 28 inflated a cached one with a neighbour's memory traffic).
  r.eager_paired = m.eager_paired;
  r.speedup_eager = m.speedup_eager;
  r.speedup_compile = m.speedup_compile;
  r.speedup_eager_interval = m.speedup_eager_interval;
  r.speedup_compile_interval = m.speedup_compile_interval;
  r.message = fmt::format("{:.4g} ms (eager {:.4g} ms beside it, {:.4g} ms cached{})", r.timing->median_ms,
                          r.eager_paired ? r.eager_paired->median_ms : 0.0, r.eager ? r.eager->median_ms : 0.0,
                          r.compiled ? fmt::format(", compile {:.4g} ms", r.compiled->median_ms) : "");
}

Result EvaluatorPool::evaluate(const Job& job, const BuildOutcome& build, WorkerClient& worker, Shared& shared) {
  Result r = base_result(job, device_name_);
  r.protocol = config_.protocol.name;
  r.phase_seconds["build"] = build.seconds;
  auto t = Clock::now();
  const auto base = baseline(job.task, worker, shared, r);
  r.phase_seconds["baseline"] = seconds_since(t);
  const HelloReply judge = hello_of(worker);
  r.sandbox = judge.sandbox;
  if (!base) return r;
  r.device = judge.device_name;
  r.eager = base->eager;
  r.compiled = base->compile;

  EvaluateRequest req;
  req.path = fs::absolute(job.task.file).string();
  req.scale = config_.scale;
  req.candidate = candidate_copy(job).string();
  req.static_report = build.static_report;
  req.config = config_.worker_json();
  req.log = candidate_log(job, "run").string();
  req.eager_times = base->eager_times;
  req.compile_times = base->compile_times;
  req.calls_per_window = base->calls_per_window;
  req.reference_kernels = base->reference_kernels;
  const WorkerReply reply = worker.request(to_json(req), evaluate_timeout(config_));
  r.trials = config_.correctness_trials;
  for (const auto& f : build.static_report.findings) r.warnings.push_back(f);
  if (reply.kind != WorkerReply::Kind::ok) {
    apply_failure(r, reply, "run_timeout");
    return r;
  }
  const Parsed<EvaluateReply> measured = evaluate_reply_from_json(reply.body);
  if (measured.value)
    apply_correct(r, *measured.value);
  else
    apply_malformed(r, measured.error);
  return r;
}

// On a GPU host, the build step imports each candidate, so its extensions compile on the CPU cores
// while the GPU times others. On the CPU there is nothing to overlap: the step runs only the static
// checks, in a process without torch, and the candidate's own runner imports it. A candidate the
// checks reject then costs no runner's torch import (about 3 s of CPU), one that passes a Python start.
bool EvaluatorPool::build_step_imports() const { return device_kind_ != "cpu"; }

std::optional<Result> EvaluatorPool::cached_result(const Job& job, const std::string& key) const {
  if (!config_.use_cache) return std::nullopt;
  const auto hit = results_.get(key);
  if (!hit || hit->value("cache_key", "") != key) return std::nullopt;
  try {
    Result r = result_from_json(*hit);
    r.candidate = job.candidate.file.string();
    r.cached = true;
    return r;
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // an unreadable entry is a miss
  }
}

fs::path EvaluatorPool::stored_copy(const Job& job) const {
  const fs::path copy = candidate_copy(job);
  if (!fs::exists(copy)) core::write_file_atomic(copy, job.candidate.source);
  return copy;
}

fs::path EvaluatorPool::candidate_copy(const Job& job) const {
  return config_.cache_dir / "candidates" / (job.candidate.hash + ".py");
}

// One log per candidate and step, so a candidate that prints a flood fills only its own (capped) file.
fs::path EvaluatorPool::candidate_log(const Job& job, const char* step) const {
  return config_.cache_dir / "logs" /
         fmt::format("{}-{}-{}.log", step, job.candidate.hash.substr(0, 16), flat_id(job.task.id));
}

std::vector<Result> EvaluatorPool::run(const std::vector<Job>& jobs,
                                       const std::function<void(const Result&)>& on_result) {
  std::vector<Result> results(jobs.size());
  std::vector<bool> done(jobs.size(), false);
  Shared shared;
  std::vector<std::string> keys(jobs.size());
  std::vector<Clock::time_point> started(jobs.size(), Clock::now());
  std::vector<std::vector<size_t>> twins(jobs.size());  // later jobs of the same pair, by their first
  std::atomic<bool> stopping{false};

  auto emit = [&](size_t i, Result r) {
    std::lock_guard lock(shared.result_mu);
    if (done[i]) return;
    if (stopping && !r.cached && r.verdict != Verdict::correct) {
      // Killed by the deadline, not by its own doing: say so, and never cache it.
      r = base_result(jobs[i], device_name_);
      r.verdict = Verdict::timeout;
      r.reason = "not_evaluated";
      r.message = "the run stopped (deadline or interrupt) before this candidate was evaluated";
    }
    r.eval_seconds = seconds_since(started[i]);
    const bool cacheable = !r.cached && config_.use_cache && r.verdict != Verdict::invalid_task &&
                           r.verdict != Verdict::timeout &&
                           !(r.verdict == Verdict::runtime_error &&
                             (r.reason == "worker_error" || r.reason == "build_not_started" || r.reason == "sandbox"));
    if (cacheable) {
      nlohmann::json entry = to_json(r);
      entry["cache_key"] = keys[i];  // a stored result answers only the question it was computed for
      results_.put(keys[i], entry);
    }
    {
      std::lock_guard s(stats_mu_);
      ++stats_.results;
      if (r.cached) ++stats_.result_cache_hits;
    }
    results[i] = r;
    done[i] = true;
    if (on_result) on_result(results[i]);
    // Its twins in this run (the same task and source, e.g. two samples that wrote the same
    // file) get this result rather than a measurement of their own: one pair, one answer.
    for (const size_t twin : twins[i]) {
      Result copy = results[i];
      copy.candidate = jobs[twin].candidate.file.string();
      copy.cached = true;
      {
        std::lock_guard s(stats_mu_);
        ++stats_.results;
        ++stats_.result_cache_hits;
      }
      results[twin] = std::move(copy);
      done[twin] = true;
      if (on_result) on_result(results[twin]);
    }
  };

  // Cached results first; everything else is copied into the content-addressed candidate store.
  std::vector<size_t> to_build;
  std::map<std::string, size_t> first_of_key;
  for (size_t i = 0; i < jobs.size(); ++i) {
    keys[i] = result_key(jobs[i]);
    if (jobs[i].fresh) continue;
    const auto [first, inserted] = first_of_key.emplace(keys[i], i);
    if (!inserted) twins[first->second].push_back(i);  // answered when its first is
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].fresh && first_of_key.at(keys[i]) != i) continue;  // a twin
    if (!jobs[i].fresh) {
      if (std::optional<Result> hit = cached_result(jobs[i], keys[i])) {
        emit(i, *hit);
        continue;
      }
    }
    stored_copy(jobs[i]);
    to_build.push_back(i);
  }
  shared.builds_left = to_build.size();

  std::mutex build_mu;
  size_t next_build = 0;
  auto builder = [&](BuildStep& step) {
    for (;;) {
      size_t i;
      {
        std::lock_guard lock(build_mu);
        if (next_build >= to_build.size() || stopping) return;
        i = to_build[next_build++];
      }
      std::optional<BuildOutcome> prepared = take_prepared(jobs[i]);
      BuildOutcome b = prepared ? std::move(*prepared)
                                : step.run(candidate_copy(jobs[i]), jobs[i].task, candidate_log(jobs[i], "build"));
      if (!prepared) {
        std::lock_guard s(stats_mu_);
        ++stats_.builds;
      }
      if (!b.ok) {
        Result r = base_result(jobs[i], device_name_);
        r.protocol = config_.protocol.name;
        r.verdict = b.verdict;
        r.reason = b.reason;
        r.message = b.message;
        r.phase_seconds["build"] = b.seconds;
        emit(i, r);
      }
      std::lock_guard lock(shared.mu);
      if (b.ok) {
        shared.builds[i] = std::move(b);
        shared.ready.push_back(i);
      }
      --shared.builds_left;
      shared.cv.notify_all();
    }
  };
  auto runner = [&](WorkerClient& worker) {
    for (;;) {
      size_t i;
      BuildOutcome b;
      {
        std::unique_lock lock(shared.mu);
        shared.cv.wait(lock, [&] { return !shared.ready.empty() || shared.builds_left == 0 || stopping; });
        if (shared.ready.empty() || stopping) return;
        i = shared.ready.front();
        shared.ready.pop_front();
        b = shared.builds[i];
      }
      Result r;
      try {
        r = evaluate(jobs[i], b, worker, shared);
      } catch (const std::exception& e) {  // the worker cannot start: every job on it says why
        r = base_result(jobs[i], device_name_);
        r.verdict = Verdict::runtime_error;
        r.reason = "worker_error";
        r.message = e.what();
      }
      emit(i, r);
    }
  };

  // An interrupt or a deadline already due stops the run before any job starts: the watcher below
  // would notice it only after the threads had taken their first jobs.
  if ((deadline_ && Clock::now() >= *deadline_) || (interrupt_ && *interrupt_)) stopping = true;
  std::vector<std::thread> threads;
  const int nbuild =
      to_build.empty() ? 0 : std::max(1, std::min<int>(config_.build_jobs, static_cast<int>(to_build.size())));
  while (static_cast<int>(builders_.size()) < nbuild)
    builders_.push_back(
        std::make_unique<BuildStep>(config_, static_cast<int>(builders_.size()), !build_step_imports()));
  for (int b = 0; b < nbuild; ++b) threads.emplace_back(builder, std::ref(*builders_[static_cast<size_t>(b)]));
  for (auto& w : workers_) threads.emplace_back(runner, std::ref(*w));
  // The watcher ends the run at the deadline or on an interrupt: it kills what is in flight (the
  // judges and build servers restart on the next run) and wakes the threads so they return.
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    while (!finished) {
      if ((deadline_ && Clock::now() >= *deadline_) || (interrupt_ && *interrupt_)) {
        stopping = true;
        {
          std::lock_guard lock(shared.mu);
          shared.cv.notify_all();
        }
        for (auto& w : workers_) w->kill_async();
        for (auto& b : builders_) b->kill_async();
        if (prepared_) prepared_->step->kill_async();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  for (auto& th : threads) th.join();
  finished = true;
  watcher.join();
  sweep();
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!done[i]) emit(i, Result{});
  return results;
}

}  // namespace vinci::eval
