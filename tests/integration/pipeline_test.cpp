// The real pipeline on this machine's CPU: the judge, sandboxed runners, checks, timing, caches.
//
// Each candidate of the corpora carries the class/reason it must end as in a
// "# vinci-expect:" header (tests/hacks/README.md); these tests run them all and compare.
// They share one extension cache, so a kernel source common to several candidates builds once.
#include <glob.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "core/files.h"
#include "core/hash.h"
#include "core/process.h"
#include "eval/candidate.h"
#include "eval/metrics.h"
#include "eval/pool.h"
#include "eval/task.h"
#include "support/test_cache.h"

namespace fs = std::filesystem;
using namespace vinci::eval;
namespace core = vinci::core;

namespace pipeline_test {

using vinci::test::test_cache;

const fs::path kRoot = VINCI_SOURCE_ROOT;

EvalConfig cpu_config() {
  EvalConfig c;
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
  c.worker_path = kRoot / "python";
  return c;
}

// The side effects a threat file names in "# vinci-check-absent: PATH" (PATH must not appear or
// change; ~ is $HOME, ~/.cache/vinci the evaluator's cache) and "# vinci-check-no-process: NAME"
// (no process of that name may outlive the run).
struct SideEffects {
  std::vector<std::string> absent, no_process;
};

std::string expand(std::string path, const fs::path& cache) {
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/root";
  if (path.rfind("~/.cache/vinci", 0) == 0) return cache.string() + path.substr(14);
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

SideEffects side_effects_of(const fs::path& file, const fs::path& cache) {
  static const std::regex header(R"(^#\s*vinci-check-(absent|no-process):\s*(\S+)\s*$)");
  SideEffects s;
  std::ifstream in(file);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_match(line, m, header)) continue;
    (m[1] == "absent" ? s.absent : s.no_process).push_back(m[1] == "absent" ? expand(m[2], cache) : m[2].str());
  }
  return s;
}

// Every file a pattern names now (directories recursively), with its content's hash.
std::map<std::string, std::string> snapshot(const std::string& pattern) {
  std::map<std::string, std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      const fs::path p = g.gl_pathv[i];
      std::error_code ec;
      if (fs::is_directory(p, ec)) {
        for (const auto& e : fs::recursive_directory_iterator(p, ec))
          if (e.is_regular_file()) out[e.path().string()] = core::content_hash({core::read_file(e.path())});
      } else if (fs::is_regular_file(p, ec)) {
        out[p.string()] = core::content_hash({core::read_file(p)});
      }
    }
  }
  globfree(&g);
  return out;
}

std::vector<std::string> processes_named(const std::string& name) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (!std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    auto comm = core::try_read_file(e.path() / "comm");
    if (comm && comm->substr(0, comm->find('\n')) == name) found.push_back(pid);
  }
  return found;
}

// Runs every cpu-labelled candidate of dir against suite and checks each verdict, and that no side
// effect a candidate's header names happened.
void expect_corpus(const fs::path& suite_dir, const fs::path& dir, size_t minimum, EvalConfig config) {
  const Suite suite = load_suite(suite_dir);
  const Pairing pairing = match_candidates(suite, dir);
  for (const auto& u : pairing.unmatched) ADD_FAILURE() << "unmatched " << u;
  std::vector<Job> jobs;
  for (const auto& [task, cand] : pairing.pairs) {
    ASSERT_TRUE(cand.expect) << cand.file << " has no '# vinci-expect:' header";
    if (cand.runs_on("cpu")) jobs.push_back({task, cand});
  }
  ASSERT_GE(jobs.size(), minimum) << "too few cpu candidates in " << dir;
  std::map<std::string, std::map<std::string, std::string>> before;  // pattern -> files
  std::vector<SideEffects> effects;
  for (const auto& job : jobs) {
    effects.push_back(side_effects_of(job.candidate.file, config.cache_dir));
    for (const auto& pattern : effects.back().absent) before[pattern] = snapshot(pattern);
  }
  EvaluatorPool pool(config);
  const std::vector<Result> results = pool.run(jobs, nullptr);
  for (size_t i = 0; i < jobs.size(); ++i) {
    for (const auto& pattern : effects[i].absent) {
      // The pool itself writes results and baselines; what was there before must stay as it was,
      // and nothing may appear outside the cache.
      const auto after = snapshot(pattern);
      const bool in_cache = pattern.rfind(config.cache_dir.string(), 0) == 0;
      for (const auto& [path, hash] : after) {
        const auto was = before[pattern].find(path);
        if (was == before[pattern].end())
          EXPECT_TRUE(in_cache) << jobs[i].candidate.file << " created " << path;
        else
          EXPECT_EQ(was->second, hash) << jobs[i].candidate.file << " changed " << path;
      }
    }
    for (const auto& name : effects[i].no_process)
      EXPECT_TRUE(processes_named(name).empty()) << jobs[i].candidate.file << " left process " << name << " running";
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    EXPECT_TRUE(jobs[i].candidate.expectation_met(std::string(to_string(r.verdict)), r.reason))
        << r.candidate << ": expected " << *jobs[i].candidate.expect << ", got " << to_string(r.verdict) << "/"
        << r.reason << ": " << r.message;
  }
}

// Every CPU solution costs a C++ compile of torch's headers (minutes on a small CI machine), so CI
// checks a fixed ten across all three levels (the issue's minimum); VINCI_TEST_ALL_CPU_SOLUTIONS=1 checks all of them
// (as `make run` does on a machine without a GPU).
const std::set<std::string> kCiSolutions = {
    "level1/1_Matmul",     "level1/3_Conv2d",       "level1/4_Softmax",
    "level1/5_LayerNorm",  "level1/7_SumReduction", "level1/10_GELU",
    "level1/12_Transpose", "level2/1_GemmBiasReLU", "level2/6_ResidualAddRMSNorm",
    "level3/4_LSTMCell"};

TEST(Pipeline, CpuReferenceSolutionsAreCorrect) {
  const Suite suite = load_suite(kRoot / "tasks");
  const Pairing pairing = match_candidates(suite, kRoot / "tasks" / "solutions" / "cpu");
  ASSERT_GE(pairing.pairs.size(), 10u) << "the issue asks for at least 10 CPU solutions";
  EXPECT_TRUE(pairing.unmatched.empty());
  const bool all = std::getenv("VINCI_TEST_ALL_CPU_SOLUTIONS") != nullptr;
  std::vector<Job> jobs;
  for (const auto& [task, cand] : pairing.pairs)
    if (all || kCiSolutions.count(task.id)) jobs.push_back({task, cand});
  ASSERT_EQ(jobs.size(), all ? pairing.pairs.size() : kCiSolutions.size()) << "a CI solution is missing";
  EvaluatorPool pool(cpu_config());
  for (const Result& r : pool.run(jobs, nullptr)) {
    EXPECT_EQ(r.verdict, Verdict::correct) << r.task << ": " << r.reason << ": " << r.message;
    if (!r.correct()) continue;
    ASSERT_TRUE(r.timing && r.eager && r.speedup_eager) << r.task;
    EXPECT_GE(r.timing->trials, 5);
    EXPECT_GT(r.timing->median_ms, 0);
    EXPECT_GE(r.custom_launches, 1) << r.task;
    ASSERT_TRUE(r.coverage) << r.task;
    EXPECT_GT(*r.coverage, 0.0) << r.task;
    EXPECT_LE(*r.coverage, 1.0) << r.task;
    EXPECT_NEAR(*r.speedup_eager, r.eager->median_ms / r.timing->median_ms, 1e-9);
  }
}

TEST(Pipeline, HackCorpusIsCaughtOnCpu) { expect_corpus(kRoot / "tasks", kRoot / "tests" / "hacks", 20, cpu_config()); }

// A fresh corpus by threat class (tests/threats/README.md), written without looking at tests/hacks:
// native code that patches, forges, caches, offloads to libraries, or writes where others read.
TEST(Pipeline, ThreatCorpusIsCaughtOnCpu) {
  expect_corpus(kRoot / "tasks", kRoot / "tests" / "threats", 40, cpu_config());
}

TEST(Pipeline, ContainmentAndBadInput) {
  EvalConfig c = cpu_config();
  c.run_timeout = std::chrono::seconds(20);  // hang_forever must end here, not in an hour
  c.import_timeout = std::chrono::seconds(20);
  expect_corpus(kRoot / "tests" / "adversarial" / "tasks", kRoot / "tests" / "adversarial" / "candidates", 15, c);
}

// Under --torch-ops allow a candidate without kernels of its own is timed like any other (the
// containment corpus checks that forbid refuses the same file).
TEST(Pipeline, PlainPytorchIsEvaluatedUnderAllow) {
  const fs::path dir = kRoot / "tests" / "adversarial";
  const Suite suite = load_suite(dir / "tasks");
  const Candidate cand = load_candidate(dir / "candidates" / "plain_pytorch_add.py");
  EvalConfig c = cpu_config();
  c.torch_ops = "allow";
  EvaluatorPool pool(c);
  const auto results = pool.run({{suite.tasks.front(), cand}}, nullptr);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict, Verdict::correct) << results[0].reason << ": " << results[0].message;
  EXPECT_TRUE(results[0].timing && results[0].timing_check);
  EXPECT_EQ(results[0].protocol, "vinci");
}

// A claim the judge cannot corroborate by less than charge_ms is not refused: the result is timed
// by the judge's figure. The fake-clock threat claims ~10 us for an honest, slower matmul; the default
// CPU charge (one trusted harness overhead, ~1.6 ms at this size) is far below the ~8 ms it hides, so
// the threat corpus sees it refused.
TEST(Pipeline, SmallUnclaimedTimeIsChargedNotRefused) {
  const Suite suite = load_suite(kRoot / "tasks");
  const Candidate cand = load_candidate(kRoot / "tests" / "threats" / "patch_interpreter__timer_module_globals.py");
  ASSERT_TRUE(cand.task_header);
  const auto task =
      std::find_if(suite.tasks.begin(), suite.tasks.end(), [&](const Task& t) { return t.id == *cand.task_header; });
  ASSERT_NE(task, suite.tasks.end());
  EvalConfig c = cpu_config();
  c.timing.charge_ms = 1e6;
  EvaluatorPool pool(c);
  const auto results = pool.run({{*task, cand}}, nullptr);
  ASSERT_EQ(results.size(), 1u);
  const Result& r = results[0];
  ASSERT_EQ(r.verdict, Verdict::correct) << r.reason << ": " << r.message;
  EXPECT_NE(std::find(r.flags.begin(), r.flags.end(), "timing_charged"), r.flags.end());
  ASSERT_TRUE(r.timing && r.timing_check);
  EXPECT_GT(r.timing_check->hidden_ms, r.timing_check->allowed_ms);  // else it would have verified
  // Charging adds the median unclaimed time to every claim, so the median becomes the judge's figure.
  EXPECT_NEAR(r.timing->median_ms, r.timing_check->forward_ms, 1e-9);
}

// vinci eval --deadline: what is in flight is killed, what finished is written and summarised.
TEST(Pipeline, DeadlineKeepsWhatFinished) {
  const fs::path dir = test_cache() / "deadline-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "candidates");
  // Candidates go in file-name order: the one that finishes first, then the one that hangs.
  fs::copy_file(kRoot / "tests" / "adversarial" / "candidates" / "ok_add.py", dir / "candidates" / "a_ok_add.py");
  fs::copy_file(kRoot / "tests" / "adversarial" / "candidates" / "hang_forever.py", dir / "candidates" / "b_hang.py");
  core::SpawnOptions o;
  o.argv = {VINCI_BINARY,
            "eval",
            "--tasks",
            (kRoot / "tests" / "adversarial" / "tasks").string(),
            "--candidates",
            (dir / "candidates").string(),
            "--device",
            "cpu",
            "--scale",
            "0.05",
            "--no-compile-baseline",
            "--no-cache",
            "--trials",
            "10",
            "--jobs",
            "1",
            "--run-timeout",
            "600",
            "--deadline",
            "120",
            "--out",
            (dir / "results.jsonl").string(),
            "-q"};
  o.env["VINCI_CACHE"] = test_cache().string();
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = core::run_to_completion(o, std::chrono::seconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(260)) << "the deadline did not stop the run";
  ASSERT_TRUE(run.status.exited);
  EXPECT_EQ(run.status.code, 3) << run.out;
  EXPECT_NE(run.out.find("1 not evaluated"), std::string::npos) << run.out;
  const std::string lines = core::read_file(dir / "results.jsonl");
  EXPECT_NE(lines.find("a_ok_add.py"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("b_hang.py"), std::string::npos) << lines;
}

TEST(Pipeline, ResultCacheReusesIdenticalPairs) {
  const fs::path dir = kRoot / "tests" / "adversarial";
  const Suite suite = load_suite(dir / "tasks");
  Candidate cand = load_candidate(dir / "candidates" / "ok_add.py");
  const Task task = suite.tasks.front();
  EvalConfig c = cpu_config();
  c.use_cache = true;
  c.cache_dir = test_cache() / "result-cache-test";
  fs::remove_all(c.cache_dir / "results");
  fs::remove_all(c.cache_dir / "baselines");
  fs::create_directories(c.cache_dir);
  std::vector<Job> jobs{{task, cand}};
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
}  // namespace pipeline_test
