#include "cli/evaluator_options.h"

#include <chrono>

namespace vinci::cli {

eval::EvalConfig EvaluatorOptions::resolved() const {
  eval::EvalConfig c = config;
  c.compile_timeout = std::chrono::seconds(compile_timeout_s);
  c.run_timeout = std::chrono::seconds(run_timeout_s);
  return c;
}

void add_host_evaluator_options(CLI::App& app, EvaluatorOptions& o) {
  auto& e = o.config;
  app.add_option("--device", e.device, "where kernels are evaluated: cpu, cuda (one worker per visible GPU) or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--cache-dir", e.cache_dir, "evaluator cache folder (default $VINCI_CACHE or ~/.cache/vinci)");
  app.add_option("--compile-timeout", o.compile_timeout_s, "seconds per extension build")->capture_default_str();
  app.add_option("--compile-memory", e.compile_memory_bytes,
                 "bytes of resident memory an extension build's processes may hold together")
      ->check(CLI::Range(uint64_t{64} << 20, uint64_t{1} << 50))
      ->capture_default_str();
  app.add_option("--compile-cpu", e.compile_cpu_seconds, "CPU seconds per process of an extension build")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--run-timeout", o.run_timeout_s,
                 "seconds for a candidate's correctness calls, and again for its timed calls")
      ->capture_default_str();
}

void add_evaluator_options(CLI::App& app, EvaluatorOptions& o) {
  add_host_evaluator_options(app, o);
  auto& e = o.config;
  app.add_option("--scale", e.scale,
                 "multiply the sizes tasks list in SCALABLE: 0.05 for CPU runs; above 1 on a GPU, where a "
                 "small task's time is mostly the host's launch work, not its kernels'")
      ->check(CLI::Range(1e-6, 64.0))
      ->capture_default_str();
  app.add_option("--trials", e.timing.trials, "timed calls per measurement")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--time-budget", e.timing.budget_s, "seconds at most per timing run (at least 10 trials)")
      ->capture_default_str();
  app.add_flag("!--no-compile-baseline", e.compile_baseline,
               "skip the torch.compile baseline (speedups over torch.compile are then absent)");
  app.add_option("--torch-ops", e.torch_ops, "torch compute ops inside ModelNew.forward")
      ->check(CLI::IsMember({"forbid", "warn", "allow"}))
      ->capture_default_str();
}

}  // namespace vinci::cli
