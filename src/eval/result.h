// The outcome of evaluating one candidate on one task: one JSON line of results.jsonl.
#pragma once

#include <array>
#include <cstdint>
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

// How the judge measured a candidate's timed calls (python/vinci_worker/call_window.py): every
// window from outside the runner, a few calls read back and checked.
struct TimingCheck {
  std::string clock;         // what was read: the wall clock to the end of a drain (GPU), or the sandbox's CPU time
  int calls_per_window = 1;  // calls a window held: the baseline's count (a short call is timed in company),
                             // fewer where one call of the candidate alone fills a window
  int windows = 0;           // timed windows
  // Of the timed windows, those the timing planned; the rest ran for the trusted sampler, and make the speed too.
  int planned_windows = 0;
  int opened = 0;            // timed calls read and checked against the reference after they ended
  uint64_t flush_bytes = 0;  // written by the judge before every window (twice the L2 or the CPU's last cache)
  // The kind of inputs every timed call drew, the reference's too (python/vinci_runner/inputs.py):
  // "signed" where the reference is finite on them, so no path a kernel takes only on the task's own
  // values is ever timed (red-team round 18); "task" under the KernelBench protocol.
  std::string timed_inputs;
  std::optional<double> gpu_busy_share;  // GPU: the share of a median call the kernels kept the GPU busy (a claim)
  // GPU, by the judge's clock: the fastest monitored trial, the most it may take (red-team round 38:
  // watched calls held to the timed ones) and the profiled call's window, which is recorded, not held.
  std::optional<double> watched_ms, watched_allowed_ms, profiled_ms;
  // CPU, from the trusted sampler's samples of the timed windows: library code's CPU time a call, and
  // its share of the compiled code's (the library_compute bound, python/vinci_worker/judge.py)
  std::optional<double> library_ms_per_call, library_share;
  std::optional<int> compiled_samples;  // CPU: the sampler's samples in compiled code over those windows
  // GPU, from the trusted sampler's samples of the timed and check windows: those in a GPU math
  // library's host code (2 reject under forbid), and all of them
  std::optional<int> gpu_library_samples, host_samples;
  // The median call of the timed windows of rounding-biased draws, and of plain ones (every other
  // window): the timing is the slower kind's (red-team round 55: a table of the biased values).
  std::optional<double> biased_median_ms, plain_median_ms;
};

using Interval = std::array<double, 2>;

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
  std::optional<TimingStats> eager_paired;  // the reference timed beside the candidate: the speedups' baseline
  std::optional<TimingCheck> timing_check;
  std::optional<double> speedup_eager, speedup_compile;
  // 95% intervals of those speedups, resampling both sides' calls (flag speedup_uncertain when the
  // eager one holds 1).
  std::optional<Interval> speedup_eager_interval, speedup_compile_interval;
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
// A [low, high] pair under key, or nullopt when it is absent or not two numbers.
std::optional<Interval> interval_from_json(const nlohmann::json& j, const char* key);
// The worker's "profile" list ([{name, calls, total_us, custom}]); throws nlohmann's exceptions.
std::vector<KernelTime> kernel_times_from_json(const nlohmann::json& j);

}  // namespace vinci::eval
