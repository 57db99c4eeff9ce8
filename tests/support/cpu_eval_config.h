// The evaluator settings the CPU pipeline tests share: small shapes, no torch.compile baseline,
// a fixed count of timed calls, the shared extension cache.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "eval/config.h"
#include "support/test_cache.h"

namespace vinci::test {

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
