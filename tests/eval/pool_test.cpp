// The evaluator pool on this machine's CPU, with the real worker: what it reports per job, its
// result cache, an interrupted run, and the device it refuses. (The judge's verdicts on the
// corpora are pipeline_test's.)
#include "eval/pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "support/cpu_eval_config.h"
#include "support/test_cache.h"

namespace fs = std::filesystem;
using namespace vinci::eval;

namespace pool_test {

using vinci::test::test_cache;

const fs::path kRoot = VINCI_SOURCE_ROOT;
// The pool is under test here, not the forbid rule: ok_add's calls are tens of microseconds, and on
// a loaded 2-core host the trusted sampler can end its extra windows under the samples a share is
// measured from, which forbid rejects (a CI run: the cache test's first job rejected/library_compute).
// The corpora and Eval.UnmeasuredCoverage test that rule; warn leaves the rest of the judge as is.
EvalConfig with_warn(EvalConfig c) {
  c.torch_ops = vinci::test::kAgentTestsTorchOps;
  return c;
}
EvalConfig cpu_config() { return with_warn(vinci::test::cpu_eval_config()); }

const fs::path kAdversarial = kRoot / "tests" / "adversarial";
Task adversarial_task() { return load_suite(kAdversarial / "tasks").tasks.front(); }
Candidate ok_add() { return load_candidate(kAdversarial / "candidates" / "ok_add.py"); }

// The CPU settings with the result cache on, in a folder of the test's own emptied of earlier runs.
// Its ext/ is the shared test cache's: only the result cache is under test here, and a folder of
// extensions of its own would build torch/extension.h precompiled again (over a minute of CPU on
// the 2-core CI machine) before ok_add itself.
EvalConfig cached_config(const std::string& folder) { return with_warn(vinci::test::cpu_eval_config_in(folder)); }

// Under --torch-ops allow a candidate without kernels of its own is timed like any other (the
// containment corpus checks that forbid refuses the same file).
TEST(Pool, PlainPytorchIsEvaluatedUnderAllow) {
  const Candidate cand = load_candidate(kAdversarial / "candidates" / "plain_pytorch_add.py");
  EvalConfig c = cpu_config();
  c.torch_ops = "allow";
  EvaluatorPool pool(c);
  const auto results = pool.run({{adversarial_task(), cand}}, nullptr);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict, Verdict::correct) << results[0].reason << ": " << results[0].message;
  EXPECT_TRUE(results[0].timing && results[0].timing_check);
  EXPECT_EQ(results[0].protocol, "vinci");
}

// On the CPU the build step only runs the static checks (no torch in that process); a candidate
// they reject is answered there, and the judge never starts a runner for it: no run log, no load.
TEST(Pool, TheStaticChecksRejectWithoutARunnerOnTheCpu) {
  EvalConfig c = cached_config("pool-static-test");
  c.torch_ops = "forbid";  // the static checks are forbid's
  c.use_cache = false;
  fs::remove_all(c.cache_dir / "logs");
  EvaluatorPool pool(c);
  const auto results =
      pool.run({{adversarial_task(), load_candidate(kAdversarial / "candidates" / "plain_pytorch_add.py")}}, nullptr);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict, Verdict::rejected) << results[0].reason << ": " << results[0].message;
  EXPECT_TRUE(results[0].phase_seconds.count("build"));
  EXPECT_FALSE(results[0].phase_seconds.count("load"));
  size_t build_logs = 0;
  for (const auto& e : fs::directory_iterator(c.cache_dir / "logs")) {
    const std::string name = e.path().filename().string();
    EXPECT_NE(name.rfind("run-", 0), 0u) << "the judge ran it: " << name;
    build_logs += name.rfind("build-", 0) == 0 && name.find("server") == std::string::npos;
  }
  EXPECT_EQ(build_logs, 1u);
}

// A task whose call is short beside what a window costs is timed several calls a window, the
// count the baseline chose, and the result says how it was measured: the sandbox's CPU time, the
// judge's flush, calls read back, and an interval for the speedup. (ok_add's eager call is a few
// tens of microseconds, far below the 5 ms a window aims at, on any load.)
TEST(Pool, ShortCallsAreTimedSeveralToAWindow) {
  EvalConfig c = cpu_config();
  EvaluatorPool pool(c);
  const auto results = pool.run({{adversarial_task(), ok_add()}}, nullptr);
  ASSERT_EQ(results.size(), 1u);
  const Result& r = results[0];
  ASSERT_EQ(r.verdict, Verdict::correct) << r.reason << ": " << r.message;
  ASSERT_TRUE(r.timing && r.timing_check && r.eager);
  EXPECT_GT(r.timing_check->calls_per_window, 1);
  EXPECT_LE(r.timing_check->calls_per_window, c.timing.max_calls_per_window);
  EXPECT_NE(r.timing_check->clock.find("cpu time"), std::string::npos) << r.timing_check->clock;
  EXPECT_GE(r.timing_check->windows, c.timing.min_trials);
  EXPECT_GE(r.timing_check->opened, 1);
  EXPECT_GT(r.timing_check->flush_bytes, 0u);
  ASSERT_TRUE(r.speedup_eager && r.speedup_eager_interval);
  EXPECT_LE((*r.speedup_eager_interval)[0], (*r.speedup_eager_interval)[1]);
}

TEST(Pool, ResultCacheReusesIdenticalPairs) {
  EvalConfig c = cached_config("pool-result-cache-test");
  std::vector<Job> jobs{{adversarial_task(), ok_add()}};
  {
    EvaluatorPool pool(c);
    const auto first = pool.run(jobs, nullptr);
    ASSERT_EQ(first[0].verdict, Verdict::correct) << first[0].message;
    EXPECT_FALSE(first[0].cached);
    EXPECT_EQ(pool.stats().builds, 1);
  }
  {
    EvaluatorPool pool(c);
    const auto second = pool.run(jobs, nullptr);
    EXPECT_TRUE(second[0].cached);
    EXPECT_EQ(second[0].verdict, Verdict::correct);
    EXPECT_EQ(pool.stats().builds, 0);  // a cache hit neither builds nor starts a worker
  }
  {
    c.use_cache = false;  // --no-cache evaluates again
    EvaluatorPool pool(c);
    const auto third = pool.run(jobs, nullptr);
    EXPECT_FALSE(third[0].cached);
    EXPECT_EQ(pool.stats().builds, 1);
  }
}

// A fresh job is measured again even when the cache holds its pair (the verifier's repeats), and
// another candidate's source is another question.
TEST(Pool, FreshJobsAndOtherSourcesMissTheCache) {
  const Task task = adversarial_task();
  const Candidate cand = ok_add();
  Candidate edited = cand;
  edited.source += "\n# an edit that changes nothing but the bytes\n";
  EvaluatorPool pool(cached_config("pool-fresh-test"));
  const auto first = pool.run({{task, cand}}, nullptr);
  ASSERT_EQ(first[0].verdict, Verdict::correct) << first[0].reason << ": " << first[0].message;
  Job fresh{task, cand};
  fresh.fresh = true;
  const auto again = pool.run({fresh, {task, edited}, {task, cand}}, nullptr);
  EXPECT_FALSE(again[0].cached) << "a fresh job is measured";
  EXPECT_FALSE(again[1].cached) << "an edited source is another pair";
  EXPECT_TRUE(again[2].cached) << "the same pair, not fresh, is the cache's";
  EXPECT_EQ(pool.stats().result_cache_hits, 1);
}

// Two samples that wrote the same file are one question: the run measures it once, and both get
// that answer, each under its own file name (RL's groups compare them, so they must not differ by
// measurement noise). Without the result cache too: this is within one run.
TEST(Pool, TwinsInOneRunAreMeasuredOnce) {
  const Task task = adversarial_task();
  const Candidate a = ok_add();
  Candidate twin = a;
  twin.file = a.file.parent_path() / "ok_add_twin.py";
  EvaluatorPool pool(cpu_config());
  std::vector<std::string> reported;
  const auto results = pool.run({{task, a}, {task, twin}}, [&](const Result& r) { reported.push_back(r.candidate); });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].verdict, Verdict::correct) << results[0].reason << ": " << results[0].message;
  EXPECT_FALSE(results[0].cached);
  EXPECT_TRUE(results[1].cached);
  EXPECT_EQ(results[1].candidate, twin.file.string());
  ASSERT_TRUE(results[0].timing && results[1].timing);
  EXPECT_EQ(results[1].timing->median_ms, results[0].timing->median_ms);
  EXPECT_EQ(pool.stats().builds, 1);
  EXPECT_EQ(reported, (std::vector<std::string>{a.file.string(), twin.file.string()}));
}

// An interrupt stops the run: every job still ends in a result, reported once through on_result,
// and a job it stopped is never cached (a later run evaluates it).
TEST(Pool, AnInterruptedRunReportsEveryJobOnceAndCachesNoneItStopped) {
  const Task task = adversarial_task();
  const Candidate a = ok_add();
  Candidate b = a;
  b.source += "\n# the second job\n";
  b.file = b.file.parent_path() / "ok_add_again.py";
  const EvalConfig c = cached_config("pool-interrupt-test");
  std::atomic<bool> interrupt{true};
  std::vector<std::string> reported;
  {
    EvaluatorPool pool(c);
    pool.stop_at(std::nullopt, &interrupt);
    const auto results = pool.run({{task, a}, {task, b}}, [&](const Result& r) { reported.push_back(r.candidate); });
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
      EXPECT_EQ(r.verdict, Verdict::timeout) << r.reason << ": " << r.message;
      EXPECT_EQ(r.reason, "not_evaluated");
    }
    EXPECT_EQ(reported.size(), 2u);
    std::sort(reported.begin(), reported.end());
    EXPECT_EQ(std::adjacent_find(reported.begin(), reported.end()), reported.end()) << "each job once";
  }
  EvaluatorPool pool(c);
  const auto later = pool.run({{task, a}}, nullptr);
  EXPECT_FALSE(later[0].cached) << "a stopped job left nothing in the cache";
  EXPECT_EQ(later[0].verdict, Verdict::correct) << later[0].reason << ": " << later[0].message;
}

TEST(Pool, CudaWithoutAGpuIsRefusedByName) {
  if (fs::exists("/proc/driver/nvidia/gpus") && !fs::is_empty("/proc/driver/nvidia/gpus"))
    GTEST_SKIP() << "this machine has a GPU";
  EvalConfig c = cpu_config();
  c.device = "cuda";
  EXPECT_THROW(
      {
        try {
          EvaluatorPool pool(c);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("no NVIDIA GPU is visible"), std::string::npos) << e.what();
          throw;
        }
      },
      std::runtime_error);
  c.device = "tpu";
  EXPECT_THROW(EvaluatorPool{c}, std::runtime_error);
}

}  // namespace pool_test
