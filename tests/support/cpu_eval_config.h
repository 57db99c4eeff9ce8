// The evaluator settings the CPU pipeline tests share: small shapes, no torch.compile baseline,
// a fixed count of timed calls, the shared extension cache.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "eval/config.h"
#include "support/test_cache.h"

namespace vinci::test {

// What the agent pipeline tests (optimize, bench-model, coevolution) judge torch ops under. Their fast
// kernel's calls are tiny (tens of microseconds of compiled loop among page faults and the call's
// own glue), so on a 2-core host running a second test beside them the trusted sampler can end its
// minute of extra windows under the 100 samples in compiled code a share is measured from, which
// --torch-ops forbid rejects (a CI run: 54 samples, 81% own, and the verifier's repeat was
// rejected/library_compute). They test the agents; the forbid rules are the corpora's and
// Eval.UnmeasuredCoverage's to test. Under warn an unmeasured share is a warning and the rest of the
// judge is unchanged.
inline constexpr const char* kAgentTestsTorchOps = "warn";

inline eval::EvalConfig cpu_eval_config() {
  eval::EvalConfig c;
  c.device = "cpu";
  c.scale = 0.05;
  c.compile_baseline = false;
  c.timing.trials = 10;  // CI checks that timing works, not how fast CPU loops are
  c.timing.min_trials = 5;
  // Long enough that timing never stops before its 10th call on a loaded machine: every timed call
  // is then opened, and a cache that is wrong on half the calls (cache_across_calls__*) is caught
  // but for a 2^-10 chance. With 2 s, 5 calls were timed under load and one such cache passed.
  c.timing.budget_s = 30;
  c.use_cache = false;  // every test evaluates for real; the extension cache still spares rebuilds
  c.cache_dir = test_cache();
  c.run_timeout = std::chrono::seconds(60);
  c.compile_timeout = std::chrono::seconds(1800);
  c.worker_path = std::filesystem::path(VINCI_SOURCE_ROOT) / "python";
  return c;
}

// The same settings with a cache folder of their own under the test cache (its results and baselines
// emptied), whose extensions are the shared ones: a test that reads what the evaluator wrote reads
// only its own, and still builds nothing the others built.
inline eval::EvalConfig cpu_eval_config_in(const std::string& folder) {
  eval::EvalConfig c = cpu_eval_config();
  c.use_cache = true;
  c.cache_dir = test_cache() / folder;
  std::filesystem::remove_all(c.cache_dir / "results");
  std::filesystem::remove_all(c.cache_dir / "baselines");
  std::filesystem::create_directories(c.cache_dir);
  std::filesystem::create_directories(test_cache() / "ext");
  if (!std::filesystem::is_symlink(c.cache_dir / "ext")) {
    std::filesystem::remove_all(c.cache_dir / "ext");
    std::filesystem::create_directory_symlink(test_cache() / "ext", c.cache_dir / "ext");
  }
  return c;
}

}  // namespace vinci::test
