// The evaluation protocol's settings (design.md §4 defaults) and where the worker lives.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace vinci::eval {

struct Tolerance {
  double atol = 1e-4, rtol = 1e-4;
};

struct TimingConfig {
  int trials = 100;       // timed calls (at least min_trials when the budget runs out first)
  int min_trials = 10;
  int warmup = 5;         // calls before timing, and at least warmup_ms of them
  double warmup_ms = 25;
  double budget_s = 20;   // per timing run
};

struct EvalConfig {
  // Protocol.
  int correctness_trials = 5;
  uint64_t seed = 42;
  std::map<std::string, Tolerance> tolerances{
      {"float32", {1e-4, 1e-4}}, {"float16", {1e-2, 1e-2}}, {"bfloat16", {1e-2, 1e-2}}, {"float64", {1e-7, 1e-7}}};
  TimingConfig timing;
  bool compile_baseline = true;  // also time torch.compile of the reference
  std::string torch_ops = "forbid";  // torch compute ops inside ModelNew.forward: forbid | warn | allow
  bool allow_precision_drop = false;
  double scale = 1.0;  // shrinks the sizes a task lists in SCALABLE

  // Where and how.
  std::string device = "auto";  // auto | cpu | cuda
  // Processes of one host that divide its GPUs (data-parallel ranks): this one times kernels on the
  // visible GPUs at positions = index (mod count), so no two of them time on one GPU at once. With
  // fewer GPUs than processes, GPU index (mod GPUs) is shared.
  int gpu_share_index = 0, gpu_share_count = 1;
  int build_jobs = 0;           // parallel builds; 0: one per CPU core
  std::chrono::seconds compile_timeout{900};
  std::chrono::seconds run_timeout{300};       // per worker request (check, time)
  std::chrono::seconds baseline_timeout{1200}; // eager + torch.compile of the reference
  uint64_t file_size_limit = 64ull << 20;      // RLIMIT_FSIZE for candidate code
  uint64_t cpu_memory_limit = 0;               // RLIMIT_AS for CPU workers; 0: 3/4 of RAM
  bool use_cache = true;        // reuse results of identical (task, candidate) pairs
  bool reuse_baselines = true;  // reuse eager/compile timings per (task, GPU, torch)
  std::filesystem::path cache_dir;   // default: $VINCI_CACHE or ~/.cache/vinci
  std::string python = "python3";    // $VINCI_PYTHON overrides
  std::filesystem::path worker_path; // the folder holding vinci_worker; default: the source tree's python/

  // What the worker needs of the protocol, as sent in each request.
  nlohmann::json worker_json() const;
  // Everything that changes a result, for the result cache key.
  std::string fingerprint() const;
  // Fills the defaults that depend on the environment (cache dir, worker path, python).
  void resolve();
};

}  // namespace vinci::eval
