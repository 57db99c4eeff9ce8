// vinci eval: every candidate of a folder against its task, one JSON line each, then fast_p.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/evaluations.h"
#include "cli/evaluator_options.h"
#include "core/files.h"
#include "core/progress.h"
#include "core/setup_error.h"
#include "eval/candidate.h"
#include "eval/metrics.h"
#include "eval/task.h"

namespace vinci::cli {

namespace {

struct EvalOptions {
  std::string tasks, candidates, out, filter, baseline = "eager", protocol = "vinci", queue;
  double deadline_s = 0;
  int import_timeout_s = 120;
  bool json = false, no_cache = false, append = false, quiet = false, expect = false, rebaseline = false;
  std::vector<int> levels;
  double atol_fp32 = 1e-4, rtol_fp32 = 1e-4, tol_half = 1e-2;
  EvaluatorOptions evaluator;
};

std::string class_counts(const std::vector<eval::Result>& results) {
  std::map<std::string, int> counts;
  for (const auto& r : results)
    ++counts[std::string(eval::to_string(r.verdict)) + (r.reason.empty() ? "" : "/" + r.reason)];
  std::string out;
  for (const auto& [k, n] : counts) out += fmt::format("  {:<36} {}\n", k, n);
  return out;
}

// --expect: every candidate with a "# vinci-expect: class/reason" header must end as it says.
int check_expectations(const std::vector<eval::Job>& jobs, const std::vector<eval::Result>& results) {
  int labelled = 0, wrong = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& expect = jobs[i].candidate.expect;
    if (!expect) continue;
    ++labelled;
    const eval::Result& r = results[i];
    std::string got = fmt::format("{}/{}", eval::to_string(r.verdict), r.reason);
    if (r.speedup_eager) got += fmt::format(" at {:.3g}x eager", *r.speedup_eager);
    if (!jobs[i].candidate.expectation_met(std::string(eval::to_string(r.verdict)), r.reason, r.speedup_eager)) {
      ++wrong;
      const auto& bound = jobs[i].candidate.speedup_below;
      fmt::print(stderr, "UNEXPECTED {}: expected {}{}, got {}: {}\n", r.candidate, *expect,
                 bound ? fmt::format(" slower than {}x eager", *bound) : "", got, r.message.substr(0, 300));
    }
  }
  fmt::print("expectations: {} passed, {} failed\n", labelled - wrong, wrong);
  return wrong == 0 ? 0 : 1;
}

// --expect checks a corpus, so a file in it that would be skipped is a mistake in the corpus: one
// that matches no task, or carries no label, is refused before anything runs.
void refuse_unchecked(const eval::Pairing& pairing, const std::string& dir) {
  std::vector<std::string> problems = pairing.unmatched;
  for (const auto& [task, cand] : pairing.pairs)
    if (!cand.expect)
      problems.push_back(fmt::format("{}: no '# vinci-expect: class/reason' header", cand.file.string()));
  if (problems.empty()) return;
  const size_t shown = std::min<size_t>(problems.size(), 5);
  throw core::SetupError(
      fmt::format("--expect: {} file{} of {} would go unchecked ({}{}); label each, or move it out of the folder",
                  problems.size(), problems.size() == 1 ? "" : "s", dir,
                  fmt::join(problems.begin(), problems.begin() + static_cast<long>(shown), "; "),
                  problems.size() > shown ? "; ..." : ""));
}

int run_eval(EvalOptions& o) {
  if (!o.queue.empty() && (o.no_cache || o.rebaseline))
    throw core::SetupError(
        "--no-cache and --rebaseline cannot go with --queue: the queue answers a pair from its result store, "
        "which only workers write; submit to a fresh queue (another database in the URL) to measure again");
  eval::Suite suite = eval::load_suite(o.tasks);
  for (const auto& s : suite.skipped) spdlog::warn("skipped {}", s);
  // Candidates are matched against every task, so that --level/--filter leave a file out rather
  // than report it unmatched.
  eval::Pairing pairing = eval::match_candidates(suite, o.candidates);
  if (o.expect) refuse_unchecked(pairing, o.candidates);
  for (const auto& u : pairing.unmatched) spdlog::warn("unmatched candidate {}", u);

  std::vector<eval::Task> selected;
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  for (const auto& t : suite.tasks) {
    if (!o.levels.empty() && std::find(o.levels.begin(), o.levels.end(), t.level) == o.levels.end()) continue;
    if (!std::regex_search(t.id, filter)) continue;
    selected.push_back(t);
  }
  if (selected.empty()) throw std::runtime_error("no task of the suite passes --level/--filter");
  std::erase_if(pairing.pairs, [&](const auto& pair) {
    return std::none_of(selected.begin(), selected.end(), [&](const eval::Task& t) { return t.id == pair.first.id; });
  });
  suite.tasks = selected;
  if (pairing.pairs.empty())
    throw std::runtime_error(fmt::format("no candidate in {} matches a task of {}", o.candidates, o.tasks));

  eval::EvalConfig c = o.evaluator.resolved();
  c.tolerances["float32"] = {o.atol_fp32, o.rtol_fp32};
  c.tolerances["float16"] = {o.tol_half, o.tol_half};
  c.tolerances["bfloat16"] = {o.tol_half, o.tol_half};
  c.use_cache = !o.no_cache;
  c.reuse_baselines = !o.rebaseline;
  c.import_timeout = std::chrono::seconds(o.import_timeout_s);
  c.protocol = eval::Protocol::named(o.protocol);
  const auto evaluations = open_evaluations(c, o.queue);
  const std::string sandbox = evaluations->sandbox();
  spdlog::info("{} candidates for {} tasks on {}, protocol {}, sandbox {}", pairing.pairs.size(), suite.tasks.size(),
               evaluations->describe(), c.protocol.name, sandbox);
  if (sandbox.rfind("bwrap", 0) != 0)
    spdlog::warn(
        "candidates are NOT isolated by namespaces on this host ({}): install bubblewrap and allow user "
        "namespaces; results carry this in their 'sandbox' field",
        sandbox);
  static std::atomic<bool> interrupted{false};
  std::signal(SIGINT, [](int) { interrupted = true; });
  std::signal(SIGTERM, [](int) { interrupted = true; });
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (o.deadline_s > 0)
    deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.deadline_s * 1000));
  evaluations->stop_at(deadline, &interrupted);

  std::vector<eval::Job> jobs;
  for (auto& [task, cand] : pairing.pairs) {
    if (o.expect && !cand.runs_on(evaluations->device_kind())) continue;  // e.g. CUDA-only hacks on a CPU run
    jobs.push_back({task, cand});
  }
  std::optional<core::LineWriter> out;
  if (!o.out.empty()) out.emplace(o.out, o.append);
  core::Progress progress("eval", jobs.size(), !o.quiet);
  const auto started = std::chrono::steady_clock::now();
  const auto all_results = evaluations->run(jobs, [&](const eval::Result& r) {
    if (r.reason == "not_evaluated") return;  // nothing was measured: the file keeps what finished
    if (out) out->write_line(eval::to_json(r).dump());
    progress.advance(fmt::format("{} {}", r.task, eval::to_string(r.verdict)));
  });
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<eval::Result> results;
  for (const auto& r : all_results)
    if (r.reason != "not_evaluated") results.push_back(r);
  const size_t not_evaluated = all_results.size() - results.size();
  if (not_evaluated)
    spdlog::warn("stopped early ({}): {} of {} candidates were not evaluated; the summary covers the {} that finished",
                 interrupted ? "interrupted" : "deadline", not_evaluated, all_results.size(), results.size());

  const eval::Baseline baseline = eval::baseline_from_string(o.baseline);
  const eval::Summary summary = eval::summarize(results, eval::task_ids_by_level(suite.tasks), baseline);
  const auto stats = evaluations->stats();
  // Throughput counts every result, a cached one too: it is what a run of this size costs.
  const double per_minute = seconds > 0 ? static_cast<double>(results.size()) * 60.0 / seconds : 0.0;
  if (o.json) {
    nlohmann::json j = eval::to_json(summary);
    j["device"] = evaluations->device();
    j["candidates"] = results.size();
    j["unmatched_candidates"] = pairing.unmatched.size();
    j["result_cache_hits"] = stats.result_cache_hits;
    j["builds"] = stats.builds;
    j["worker_restarts"] = stats.worker_restarts;
    j["not_evaluated"] = not_evaluated;
    j["seconds"] = seconds;
    j["candidates_per_minute"] = per_minute;
    j["protocol"] = c.protocol.name;
    j["sandbox"] = sandbox;
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("\nresults by class:\n{}\n{}", class_counts(results), eval::format_table(summary));
    fmt::print("{} results ({} from cache) in {:.0f} s ({:.1f} a minute), {} builds, {} worker restarts{}\n",
               results.size(), stats.result_cache_hits, seconds, per_minute, stats.builds, stats.worker_restarts,
               o.out.empty() ? "" : fmt::format("; written to {}", o.out));
    fmt::print("protocol {}, sandbox {}{}\n", c.protocol.name, sandbox,
               not_evaluated ? fmt::format("; {} not evaluated (stopped early)", not_evaluated) : "");
  }
  if (not_evaluated) return 3;
  return o.expect ? check_expectations(jobs, all_results) : 0;
}

}  // namespace

Action add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  app.add_option("--tasks", o->tasks, "task suite: a folder of levelN/<number>_<Name>.py problem files")->required();
  app.add_option("--candidates", o->candidates,
                 "folder of candidate files, matched to tasks by name (levelN/<file>, <file>, "
                 "level_L_problem_N_*.py) or by a '# vinci-task: <id>' header")
      ->required();
  add_evaluator_options(app, o->evaluator);
  add_queue_option(app, o->queue);
  app.add_option("--out", o->out, "write one JSON line per (task, candidate) to this file");
  app.add_flag("--append", o->append, "append to --out instead of replacing it");
  app.add_flag("--json", o->json, "print the summary as one JSON object instead of a table");
  app.add_option("--level", o->levels, "only these levels");
  app.add_option("--filter", o->filter, "only tasks whose id matches this regex");
  app.add_flag("--no-cache", o->no_cache, "evaluate every pair again instead of reusing cached results");
  app.add_flag("--rebaseline", o->rebaseline, "time the references again instead of reusing cached baselines");
  app.add_flag("--expect", o->expect,
               "check '# vinci-expect: class/reason' headers (skipping candidates whose '# vinci-devices:' "
               "excludes this device); exit 1 on any mismatch, exit 4 before anything runs when a file matches no "
               "task or carries no label");
  app.add_option("--correctness-trials", o->evaluator.config.correctness_trials, "correctness trials with fresh inputs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--atol", o->atol_fp32, "fp32 absolute tolerance")->capture_default_str();
  app.add_option("--rtol", o->rtol_fp32, "fp32 relative tolerance")->capture_default_str();
  app.add_option("--half-tol", o->tol_half, "fp16/bf16 absolute and relative tolerance")->capture_default_str();
  app.add_flag("--allow-precision-drop", o->evaluator.config.allow_precision_drop,
               "accept fp16/bf16/TF32 in fp32 tasks");
  app.add_option("--baseline", o->baseline, "speedup baseline for fast_p")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  app.add_option("--jobs", o->evaluator.config.build_jobs, "parallel builds (default: CPU cores)");
  app.add_option("--protocol", o->protocol,
                 "numerics and checks: vinci (TF32 off, out-of-distribution trials, fp64 check of half-precision "
                 "tasks) or kernelbench (PyTorch's TF32 defaults, the task's inputs only)")
      ->check(CLI::IsMember({"vinci", "kernelbench"}))
      ->capture_default_str();
  app.add_option("--deadline", o->deadline_s,
                 "stop after this many seconds: what is in flight is killed, and the summary covers what finished "
                 "(exit code 3)");
  app.add_option("--import-timeout", o->import_timeout_s,
                 "seconds to import a candidate and build ModelNew, builds not counted")
      ->capture_default_str();
  app.add_option("--seed", o->evaluator.config.seed, "base seed of the correctness inputs")->capture_default_str();
  app.add_flag("-q,--quiet", o->quiet, "no progress bar");
  return [o] { return run_eval(*o); };
}

}  // namespace vinci::cli
