// The judge's wire: typed requests and replies, and their only JSON conversion.
//
// The ops: hello, baseline and evaluate (`python -m vinci_worker judge`) and build (`build-server`).
// python/vinci_worker/protocol.py holds the same shapes; both sides are pinned to the fixtures of
// tests/fixtures/judge_protocol/. A reply is read into its record or into an error naming the
// field, never an exception: the judge is trusted, but a reply out of shape must become a
// classified result (runtime_error/worker_error), not a lost evaluation. Optional fields absent on
// the wire are nullopt here and are left out when written, as protocol.py leaves out None.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/config.h"
#include "eval/result.h"

namespace vinci::eval {

// A reply read into T, or why it could not be: "'timing.median_ms': not a number".
template <typename T>
struct Parsed {
  std::optional<T> value;
  std::string error;
};

// What the static checks found in a candidate's source (python/vinci_runner/importer.py): the
// build reports it, the evaluate request hands it back to the judge.
struct StaticReport {
  std::vector<std::string> kernel_names;  // __global__ and @triton.jit names the candidate declares
  std::vector<std::string> extension_functions;
  bool uses_triton = false;
  std::vector<std::string> findings;  // "line N: reason: message", kept as the result's warnings
  bool low_precision = false;         // the task's inputs are half precision
};

// A classified failure, the judge's answer to any op that did not succeed ("ok": false).
struct JudgeFailure {
  Verdict verdict = Verdict::runtime_error;  // "class"
  std::string reason, message;
  std::optional<int> trials_passed;
  std::optional<double> max_abs_diff, mean_abs_diff;
  std::optional<TimingStats> timing;            // a timing that was rejected (e.g. beats_roofline)
  std::map<std::string, double> phase_seconds;  // evaluate: where its time went before it failed
  std::vector<std::string> warnings;
  bool fatal = false;  // the judge is broken: the client restarts it
};

// --- hello: the judge's description of itself ------------------------------------------------
struct HelloRequest {};

struct HelloReply {
  std::string device;       // torch's name of it: "cpu", "cuda:0"
  std::string device_name;  // "NVIDIA H200", "cpu (x86_64, 2 cores)": results carry it
  std::string arch;         // "sm_90", "cpu"
  std::string torch, python;
  std::optional<std::string> cuda;  // torch's CUDA version
  int pid = 0;
  std::string sandbox, sandbox_mode;  // how candidates are isolated, e.g. "bwrap+seccomp"
  std::string clock;                  // what a timed window reads
  uint64_t flush_bytes = 0, l2_bytes = 0;
  std::optional<int> sm_count;
  std::optional<uint64_t> memory_bytes;
  std::optional<double> bandwidth_gbps;
  std::vector<std::string> warnings;  // what this host cannot watch
};

// --- build: the build server's static checks and import of one candidate ---------------------
struct BuildRequest {
  std::string candidate, task;  // absolute paths
  double scale = kTaskSizes;
  std::string log;
  int64_t import_timeout = 120;  // seconds
  int64_t cpu_seconds = 0;
  uint64_t address_space = 0;  // bytes; 0: unlimited (GPU builds)
  std::string torch_ops = "forbid";
  bool allow_precision_drop = false;
  bool static_only = false;  // the static checks alone (CPU: the candidate's runner imports it)
};

// The build's report ({"report": ...} on the wire).
struct BuildReply {
  bool ok = false;
  StaticReport static_report;
  // When not ok: the classification. An absent class is a compile error.
  Verdict verdict = Verdict::compile_error;
  std::string reason, message;
  double seconds = 0;
  std::vector<std::string> built;  // extension cache keys this build compiled
};

// --- baseline: the task's reference timed ----------------------------------------------------
struct BaselineRequest {
  std::string path;  // the task file
  double scale = kTaskSizes;
  nlohmann::json config = nlohmann::json::object();  // EvalConfig::worker_json(), the judge's settings
};

struct BaselineReply {
  TimingStats eager;
  std::vector<double> eager_times;  // each call's time, for the speedup's interval
  int calls_per_window = 1;
  std::optional<TimingStats> compile;  // torch.compile's, when it was timed and compiled
  std::vector<double> compile_times;
  std::optional<std::string> compile_error;
  std::vector<std::string> reference_kernels;  // GPU: full names of the kernels the reference ran
};

// --- evaluate: one candidate checked and timed ------------------------------------------------
struct EvaluateRequest {
  std::string path;  // the task file
  double scale = kTaskSizes;
  std::string candidate;  // the content-addressed copy
  StaticReport static_report;
  nlohmann::json config = nlohmann::json::object();  // EvalConfig::worker_json()
  std::string log;
  // From the baseline: its calls' times, its calls per window and its kernels.
  std::vector<double> eager_times, compile_times;
  int calls_per_window = 1;
  std::vector<std::string> reference_kernels;
};

// A correct candidate's measurement ("class": "correct").
struct EvaluateReply {
  int trials = 0, trials_passed = 0;
  double max_abs_diff = 0, mean_abs_diff = 0;
  TimingStats timing;
  std::optional<TimingCheck> external;  // how the timing was taken
  int custom_launches = 0;
  std::optional<double> coverage;
  std::vector<KernelTime> profile;
  std::vector<std::string> flags, skipped_trials, warnings;
  // The reference timed beside the candidate, and the speedups against it (torch.compile's cached
  // time scaled down where the paired eager time is below the cached one; python/vinci_worker/judge.py).
  std::optional<TimingStats> eager_paired;
  std::optional<double> speedup_eager, speedup_compile;
  std::optional<Interval> speedup_eager_interval, speedup_compile_interval;
  std::map<std::string, double> phase_seconds;
};

// A line of text read by one of the readers below: text that is not JSON is malformed too.
template <typename T>
Parsed<T> parse_reply_line(const std::string& line, Parsed<T> (*read)(const nlohmann::json&)) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return {std::nullopt, "not JSON"};
  return read(j);
}

nlohmann::json to_json(const HelloRequest& r);
nlohmann::json to_json(const BuildRequest& r);
nlohmann::json to_json(const BaselineRequest& r);
nlohmann::json to_json(const EvaluateRequest& r);
nlohmann::json to_json(const StaticReport& r);
nlohmann::json to_json(const JudgeFailure& r);
nlohmann::json to_json(const HelloReply& r);
nlohmann::json to_json(const BuildReply& r);  // with its {"report": ...} envelope
nlohmann::json to_json(const BaselineReply& r);
nlohmann::json to_json(const EvaluateReply& r);

Parsed<HelloRequest> hello_request_from_json(const nlohmann::json& j);
Parsed<BuildRequest> build_request_from_json(const nlohmann::json& j);
Parsed<BaselineRequest> baseline_request_from_json(const nlohmann::json& j);
Parsed<EvaluateRequest> evaluate_request_from_json(const nlohmann::json& j);
Parsed<JudgeFailure> failure_from_json(const nlohmann::json& j);
Parsed<HelloReply> hello_reply_from_json(const nlohmann::json& j);
Parsed<BuildReply> build_reply_from_json(const nlohmann::json& j);
Parsed<BaselineReply> baseline_reply_from_json(const nlohmann::json& j);
Parsed<EvaluateReply> evaluate_reply_from_json(const nlohmann::json& j);

// The parts of the judge's settings a baseline depends on, its timing and its numerics (each as
// JSON text), for the baseline cache's key: other settings (trials, tolerances) leave a stored
// baseline valid.
std::pair<std::string, std::string> baseline_settings(const nlohmann::json& config);

}  // namespace vinci::eval
