// The evaluator settings the CPU pipeline tests share: small shapes, no torch.compile baseline,
// a fixed count of timed calls, the shared extension cache.
#pragma once

#include <chrono>
#include <filesystem>

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

}  // namespace vinci::test
