// The evaluation protocol's settings (design.md §4 defaults) and where the worker lives.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace vinci::eval {

// Scale 1: the sizes a task lists. EvalConfig::scale's default, and a judge request's (judge_protocol.h,
// python/vinci_worker/protocol.py's TASK_SIZES).
inline constexpr double kTaskSizes = 1.0;

struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
};

// How the judge times calls (python/vinci_worker/call_window.py): every timed window is measured
// from outside the runner, and nothing the runner says about its time counts.
struct TimingConfig {
  int trials = 100;  // timed windows, each on fresh inputs (at least min_trials when the budget runs out first)
  int min_trials = 10;
  int warmup = 5;  // windows before timing, and at least warmup_ms of them
  double warmup_ms = 25;
  double budget_s = 20;  // per timing run
  int open_calls = 10;   // timed calls read and checked against the reference at random, after they ended
  // A window costs the runner's thaw, a message and (on a GPU) the drain besides its calls (about
  // 0.45 ms of CPU time on the 2-core CI machine, 0.7 ms of wall on an H200): a task whose eager call
  // is shorter than window_ms gets several calls a window, as many as make about window_ms and at
  // most max_calls_per_window, within window_bytes of inputs and outputs. The baseline chooses the
  // count and the candidate is timed with the same.
  double window_ms = 10;
  int max_calls_per_window = 64;
  uint64_t window_bytes = 1ull << 30;
};

// The numerics and checks a result was measured under (README: "Protocols"). vinci's own is the
// default; kernelbench reproduces KernelBench's judgement, for numbers comparable with its papers.
struct Protocol {
  std::string name = "vinci";
  bool allow_tf32_matmul = false;                  // PyTorch's default too
  bool allow_tf32_cudnn = false;                   // PyTorch's (and so KernelBench's) default is true
  bool ood_trials = true;                          // correctness trials on signed, offset, scaled and special inputs
  bool precision_gate = true;                      // fp16/bf16 outputs against an fp64 reference
  bool relative_error = true;                      // each output's error norm against the fp64 reference's norm
  bool strict_layout = true;                       // outputs dense row-major, as the reference's (else copied)
  static Protocol named(const std::string& name);  // vinci | kernelbench; throws naming the choices
};

struct EvalConfig {
  // Protocol.
  Protocol protocol;
  int correctness_trials = 5;
  uint64_t seed = 42;
  std::map<std::string, Tolerance> tolerances{
      {"float32", {1e-4, 1e-4}}, {"float16", {1e-2, 1e-2}}, {"bfloat16", {1e-2, 1e-2}}, {"float64", {1e-7, 1e-7}}};
  TimingConfig timing;
  bool compile_baseline = true;      // also time torch.compile of the reference
  std::string torch_ops = "forbid";  // torch compute ops inside ModelNew.forward: forbid | warn | allow
  bool allow_precision_drop = false;
  double min_coverage = 0.5;     // under forbid: the least share of forward's time in the candidate's own kernels
  double roofline_margin = 0.7;  // a claim below this share of the memory roofline's floor is refused
  double scale = kTaskSizes;     // multiplies the sizes a task lists in SCALABLE

  // Where and how.
  std::string device = "auto";  // auto | cpu | cuda
  // Processes of one host that divide its GPUs (data-parallel ranks): this one times kernels on the
  // visible GPUs at positions = index (mod count), so no two of them time on one GPU at once. With
  // fewer GPUs than processes, GPU index (mod GPUs) is shared.
  int gpu_share_index = 0, gpu_share_count = 1;
  int build_jobs = 0;                         // parallel builds; 0: one per CPU core
  std::chrono::seconds compile_timeout{900};  // per extension build (wall clock)
  // An extension build's bounds (python/vinci_worker/build_limits.py): resident memory of its whole
  // process tree, CPU time per process, the private tmpfs it works in, and the library it makes.
  uint64_t compile_memory_bytes = 8ull << 30;
  int compile_cpu_seconds = 600;
  uint64_t compile_disk_bytes = 4ull << 30;
  uint64_t compile_output_bytes = 512ull << 20;
  std::chrono::seconds import_timeout{120};     // importing a candidate and building ModelNew, builds not counted
  std::chrono::seconds run_timeout{300};        // per phase of a candidate (its correctness calls, its timed calls)
  std::chrono::seconds baseline_timeout{1200};  // eager + torch.compile of the reference
  uint64_t file_size_limit = 64ull << 20;       // RLIMIT_FSIZE for candidate code
  uint64_t cpu_memory_limit = 0;                // RLIMIT_AS for CPU candidates; 0: 3/4 of RAM
  uint64_t scratch_bytes = 1ull << 30;          // each candidate's private tmpfs
  int max_pids = 1024;                          // processes and threads per candidate, where a pids cgroup can be made
  int cpu_seconds = 600;                        // RLIMIT_CPU per candidate process
  uint64_t cache_budget_bytes = 20ull << 30;  // the cache is swept back under this (LRU; eval/cache_janitor); 0: never
  bool use_cache = true;                      // reuse results of identical (task, candidate) pairs
  bool reuse_baselines = true;                // reuse eager/compile timings per (task, GPU, torch)
  std::filesystem::path cache_dir;            // default: $VINCI_CACHE or ~/.cache/vinci
  std::string python = "python3";             // $VINCI_PYTHON overrides
  std::filesystem::path worker_path;          // the folder holding vinci_worker; default: the source tree's python/
  std::filesystem::path sandbox_path;         // vinci-sandbox; $VINCI_SANDBOX_BIN overrides; default: the build's

  // What the worker needs of the protocol, as sent in each request.
  nlohmann::json worker_json() const;
  // Everything that changes a result, for the result cache key.
  std::string fingerprint() const;
  // Fills the defaults that depend on the environment (cache dir, worker path, python).
  void resolve();
};

}  // namespace vinci::eval
