// The outcome of evaluating one candidate on one task: one JSON line of results.jsonl.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::eval {

// design.md §4's result classes, plus invalid_task for a problem file that cannot be evaluated.
enum class Verdict { correct, incorrect, rejected, compile_error, runtime_error, timeout, invalid_task };

std::string_view to_string(Verdict v);
Verdict verdict_from_string(std::string_view s);  // throws std::invalid_argument naming the value

struct TimingStats {
  int trials = 0;
  double median_ms = 0, mean_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
};

// The trusted side's view of a candidate's timed calls: its own wall clock per call, the overhead a
// trusted runner shows for everything but the forward, and what that leaves for the forward.
struct TimingCheck {
  std::string clock;  // wall (GPU) or cpu (the CPU time charged to the sandbox's processes)
  double spent_ms = 0, overhead_ms = 0, forward_ms = 0;  // medians per call
  double hidden_ms = 0;  // median over calls of the judge's figure minus the claim: time the claims do not account for
  double hidden_p10_ms = 0, hidden_p90_ms = 0;  // the spread of that per-call gap
  double allowed_ms = 0;                        // the noise a claim may be off by
  int opened = 0;                               // timed calls checked against the reference after the fact
  int attempts = 1;                             // measurements taken (a second one when the first did not verify)
  std::optional<double> gpu_busy_share;  // GPU: the share of a median call the kernels kept the GPU busy (a claim)
};

// One kernel of the profiled forward call (GPU only), for the agents' profiler summary.
struct KernelTime {
  std::string name;
  int calls = 0;
  double total_us = 0;
  bool custom = false;  // launched by the candidate's own extension
};

struct Result {
  // What was evaluated.
  std::string task;  // suite-relative id, e.g. "level1/1_Matmul"
  int level = 0;
  int task_number = 0;
  std::string task_name;
  std::string candidate;       // path as given
  std::string candidate_hash;  // content hash of the candidate file
  std::string device;          // e.g. "NVIDIA H100 80GB HBM3" or "cpu (x86_64, 2 cores)"
  std::string protocol;        // the numerics and checks it was judged under (vinci | kernelbench)
  std::string sandbox;         // how the candidate was isolated, e.g. "bwrap+seccomp"

  // The verdict.
  Verdict verdict = Verdict::runtime_error;
  std::string reason;   // machine-readable code (tests/hacks/README.md)
  std::string message;  // what a person needs to fix it: trimmed log, first mismatch, …

  // Correctness (set when the check ran).
  int trials = 0, trials_passed = 0;
  std::optional<double> max_abs_diff, mean_abs_diff;

  // Speed (set for correct results).
  std::optional<TimingStats> timing, eager, compiled;  // timing: the candidate's corroborated claims
  std::optional<TimingCheck> timing_check;
  std::optional<double> speedup_eager, speedup_compile;
  std::optional<double> coverage;   // custom-kernel time / total time in forward
  int custom_launches = 0;          // per forward call
  std::vector<KernelTime> profile;  // the forward call's kernels by GPU time, longest first (a few)
  std::vector<std::string> flags;   // e.g. "beats_roofline"
  std::vector<std::string> warnings;
  std::vector<std::string> skipped_trials;  // out-of-distribution trials where the reference itself raised

  bool cached = false;                          // reused from the result cache
  double eval_seconds = 0.0;                    // wall time spent on this pair, timing trials included
  std::map<std::string, double> phase_seconds;  // build, load, check, time, baseline: where it went

  bool correct() const { return verdict == Verdict::correct; }
};

nlohmann::json to_json(const Result& r);
// Throws std::invalid_argument naming the missing or malformed field.
Result result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimingStats& t);
TimingStats timing_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimingCheck& t);
TimingCheck timing_check_from_json(const nlohmann::json& j);
// The worker's "profile" list ([{name, calls, total_us, custom}]); throws nlohmann's exceptions.
std::vector<KernelTime> kernel_times_from_json(const nlohmann::json& j);

}  // namespace vinci::eval
