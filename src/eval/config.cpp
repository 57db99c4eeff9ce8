#include "eval/config.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"

#ifndef VINCI_SOURCE_ROOT
#define VINCI_SOURCE_ROOT "."
#endif
#ifndef VINCI_SANDBOX_BINARY
#define VINCI_SANDBOX_BINARY "vinci-sandbox"
#endif

namespace vinci::eval {

Protocol Protocol::named(const std::string& name) {
  Protocol p;
  p.name = name;
  if (name == "vinci") return p;
  if (name == "kernelbench") {
    p.allow_tf32_cudnn = true;
    p.ood_trials = false;
    p.precision_gate = false;
    p.relative_error = false;
    p.strict_layout = false;
    return p;
  }
  throw std::invalid_argument(fmt::format("unknown protocol '{}': use vinci or kernelbench", name));
}

nlohmann::json EvalConfig::worker_json() const {
  nlohmann::json tol = nlohmann::json::object();
  for (const auto& [dtype, t] : tolerances) tol[dtype] = {t.atol, t.rtol};
  return {{"protocol", protocol.name},
          {"numerics",
           {{"allow_tf32_matmul", protocol.allow_tf32_matmul}, {"allow_tf32_cudnn", protocol.allow_tf32_cudnn}}},
          {"ood_trials", protocol.ood_trials},
          {"precision_gate", protocol.precision_gate},
          {"relative_error", protocol.relative_error},
          {"strict_layout", protocol.strict_layout},
          {"seed", seed},
          {"correctness_trials", correctness_trials},
          {"tolerances", tol},
          {"torch_ops", torch_ops},
          {"allow_precision_drop", allow_precision_drop},
          {"min_coverage", min_coverage},
          {"roofline_margin", roofline_margin},
          {"compile_baseline", compile_baseline},
          {"import_timeout_s", import_timeout.count()},
          {"run_timeout_s", run_timeout.count()},
          {"compile_timeout_s", compile_timeout.count()},
          {"compile_memory_bytes", compile_memory_bytes},
          {"compile_cpu_seconds", compile_cpu_seconds},
          {"compile_disk_bytes", compile_disk_bytes},
          {"compile_output_bytes", compile_output_bytes},
          {"baseline_timeout_s", baseline_timeout.count()},
          {"file_size_limit", file_size_limit},
          {"cpu_memory_limit", cpu_memory_limit},
          {"scratch_bytes", scratch_bytes},
          {"cpu_seconds", cpu_seconds},
          {"timing",
           {{"trials", timing.trials},
            {"min_trials", timing.min_trials},
            {"warmup", timing.warmup},
            {"warmup_ms", timing.warmup_ms},
            {"budget_s", timing.budget_s},
            {"open_calls", timing.open_calls},
            {"window_ms", timing.window_ms},
            {"max_calls_per_window", timing.max_calls_per_window},
            {"window_bytes", timing.window_bytes}}}};
}

std::string EvalConfig::fingerprint() const {
  // Limits and timeouts decide whether a run finishes, not what it measures.
  nlohmann::json proto = worker_json();
  for (const char* k : {"import_timeout_s", "run_timeout_s", "compile_timeout_s", "baseline_timeout_s",
                        "file_size_limit", "cpu_memory_limit", "scratch_bytes", "cpu_seconds", "compile_memory_bytes",
                        "compile_cpu_seconds", "compile_disk_bytes", "compile_output_bytes"})
    proto.erase(k);
  return core::content_hash({proto.dump(), std::to_string(scale)});
}

void EvalConfig::resolve() {
  if (const char* p = std::getenv("VINCI_PYTHON"); p && *p) python = p;
  if (cache_dir.empty()) cache_dir = core::cache_root();
  cache_dir = std::filesystem::absolute(cache_dir);  // workers and builds run in other directories
  if (worker_path.empty()) {
    if (const char* w = std::getenv("VINCI_WORKER_PATH"); w && *w)
      worker_path = w;
    else
      worker_path = std::filesystem::path(VINCI_SOURCE_ROOT) / "python";
  }
  worker_path = std::filesystem::absolute(worker_path);
  if (sandbox_path.empty()) {
    if (const char* b = std::getenv("VINCI_SANDBOX_BIN"); b && *b)
      sandbox_path = b;
    else
      sandbox_path = VINCI_SANDBOX_BINARY;
  }
  if (build_jobs <= 0) build_jobs = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  if (cpu_memory_limit == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    cpu_memory_limit =
        pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 * 3 : (16ull << 30);
  }
}

}  // namespace vinci::eval
