#include "eval/config.h"

#include <unistd.h>

#include <cstdlib>

#include "core/hash.h"

#ifndef VINCI_SOURCE_ROOT
#define VINCI_SOURCE_ROOT "."
#endif

namespace vinci::eval {

nlohmann::json EvalConfig::worker_json() const {
  nlohmann::json tol = nlohmann::json::object();
  for (const auto& [dtype, t] : tolerances) tol[dtype] = {t.atol, t.rtol};
  return {{"seed", seed},
          {"correctness_trials", correctness_trials},
          {"tolerances", tol},
          {"torch_ops", torch_ops},
          {"allow_precision_drop", allow_precision_drop},
          {"compile_baseline", compile_baseline},
          {"timing",
           {{"trials", timing.trials},
            {"min_trials", timing.min_trials},
            {"warmup", timing.warmup},
            {"warmup_ms", timing.warmup_ms},
            {"budget_s", timing.budget_s}}}};
}

std::string EvalConfig::fingerprint() const {
  const std::string proto = worker_json().dump();
  return core::content_hash({proto, std::to_string(scale)});
}

void EvalConfig::resolve() {
  if (const char* p = std::getenv("VINCI_PYTHON"); p && *p) python = p;
  if (cache_dir.empty()) {
    if (const char* c = std::getenv("VINCI_CACHE"); c && *c) {
      cache_dir = c;
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
      cache_dir = std::filesystem::path(x) / "vinci";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
      cache_dir = std::filesystem::path(h) / ".cache" / "vinci";
    } else {
      cache_dir = "/tmp/vinci-cache";
    }
  }
  cache_dir = std::filesystem::absolute(cache_dir);  // workers and builds run in other directories
  if (worker_path.empty()) {
    if (const char* w = std::getenv("VINCI_WORKER_PATH"); w && *w) worker_path = w;
    else worker_path = std::filesystem::path(VINCI_SOURCE_ROOT) / "python";
  }
  worker_path = std::filesystem::absolute(worker_path);
  if (build_jobs <= 0) build_jobs = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  if (cpu_memory_limit == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    cpu_memory_limit = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 * 3 : (16ull << 30);
  }
}

}  // namespace vinci::eval
