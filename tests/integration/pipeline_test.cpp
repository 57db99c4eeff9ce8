// The real pipeline on this machine's CPU: the judge, sandboxed runners, checks, timing, caches.
//
// Each candidate of the corpora carries the class/reason it must end as in a
// "# vinci-expect:" header (tests/hacks/README.md); these tests run them all and compare.
// They share one extension cache, so a kernel source common to several candidates builds once.
#include <fmt/format.h>
#include <glob.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "core/files.h"
#include "core/hash.h"
#include "core/process.h"
#include "eval/candidate.h"
#include "eval/metrics.h"
#include "eval/pool.h"
#include "eval/task.h"
#include "support/cpu_eval_config.h"
#include "support/test_cache.h"

namespace fs = std::filesystem;
using namespace vinci::eval;
namespace core = vinci::core;

namespace pipeline_test {

using vinci::test::test_cache;

const fs::path kRoot = VINCI_SOURCE_ROOT;

EvalConfig cpu_config() { return vinci::test::cpu_eval_config(); }

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

// One line per result as it comes, in ctest's log: where each candidate's seconds went, so that a CI
// run says which candidates and phases its pipeline time is made of.
void print_phases(const Result& r) {
  std::string phases;
  for (const auto& [phase, seconds] : r.phase_seconds) phases += fmt::format(" {} {:.1f}", phase, seconds);
  fmt::print("  {:<64} {}/{} at {:.1f} s:{}\n", fs::path(r.candidate).filename().string(), to_string(r.verdict),
             r.reason, r.eval_seconds, phases);
  std::fflush(stdout);
}

bool expects_timeout(const Candidate& c) {
  if (!c.expect) return false;
  const std::string& e = *c.expect;
  return e.rfind("timeout/", 0) == 0 && e.find('|') == std::string::npos;
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
  // A candidate labelled timeout/ never returns, so it costs its whole run limit (and a core, when
  // it spins). Those run last, in a pool of their own with a short one, followed by a correct one
  // again, which must stay correct after them; the others run under config's limits.
  const size_t timeouts_from = static_cast<size_t>(
      std::stable_partition(jobs.begin(), jobs.end(), [](const Job& j) { return !expects_timeout(j.candidate); }) -
      jobs.begin());
  std::map<std::string, std::map<std::string, std::string>> before;  // pattern -> files
  std::vector<SideEffects> effects;
  for (const auto& job : jobs) {
    effects.push_back(side_effects_of(job.candidate.file, config.cache_dir));
    for (const auto& pattern : effects.back().absent) before[pattern] = snapshot(pattern);
  }
  std::vector<Result> results = EvaluatorPool(config).run({jobs.begin(), jobs.begin() + timeouts_from}, print_phases);
  if (timeouts_from < jobs.size()) {
    // The correct one that took least time, so its limits here are no closer than the others'.
    std::optional<size_t> again;
    for (size_t i = 0; i < timeouts_from; ++i)
      if (jobs[i].candidate.expect == "correct/" && results[i].correct() &&
          (!again || results[i].eval_seconds < results[*again].eval_seconds))
        again = i;
    if (again) {
      jobs.push_back(jobs[*again]);
      effects.push_back(effects[*again]);
    }
    EvalConfig short_limits = config;
    short_limits.run_timeout = std::chrono::seconds(15);
    for (Result& r : EvaluatorPool(short_limits).run({jobs.begin() + timeouts_from, jobs.end()}, print_phases))
      results.push_back(std::move(r));
  }
  ASSERT_EQ(results.size(), jobs.size());
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
    EXPECT_TRUE(jobs[i].candidate.expectation_met(std::string(to_string(r.verdict)), r.reason, r.speedup_eager))
        << r.candidate << ": expected " << *jobs[i].candidate.expect
        << (jobs[i].candidate.speedup_below ? fmt::format(" (slower than {}x eager)", *jobs[i].candidate.speedup_below)
                                            : "")
        << ", got " << to_string(r.verdict) << "/" << r.reason << " at "
        << (r.speedup_eager ? fmt::format("{:.3g}x", *r.speedup_eager) : "-") << ": " << r.message;
  }
}

// Every CPU solution is an extension build of its own (~12 s of CPU with torch/extension.h
// precompiled, twice that without), so CI checks a fixed ten across all three levels (the issue's
// minimum), 13_ReLU and 10_GELU among them because the agent tests' kernels reuse their extensions
// (tests/support/agent_script.h); VINCI_TEST_ALL_CPU_SOLUTIONS=1 checks all of them (as `make run`
// does on a machine without a GPU).
const std::set<std::string> kCiSolutions = {
    "level1/1_Matmul",    "level1/3_Conv2d",       "level1/4_Softmax",
    "level1/5_LayerNorm", "level1/7_SumReduction", "level1/10_GELU",
    "level1/13_ReLU",     "level2/1_GemmBiasReLU", "level2/6_ResidualAddRMSNorm",
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
  for (const Result& r : pool.run(jobs, print_phases)) {
    EXPECT_EQ(r.verdict, Verdict::correct) << r.task << ": " << r.reason << ": " << r.message;
    if (!r.correct()) continue;
    ASSERT_TRUE(r.timing && r.eager && r.eager_paired && r.speedup_eager) << r.task;
    EXPECT_GE(r.timing->trials, 5);
    EXPECT_GT(r.timing->median_ms, 0);
    EXPECT_GE(r.custom_launches, 1) << r.task;
    ASSERT_TRUE(r.coverage) << r.task;
    EXPECT_GT(*r.coverage, 0.0) << r.task;
    EXPECT_LE(*r.coverage, 1.0) << r.task;
    // The speedup is against the reference timed beside the candidate, not the cached baseline
    // (red-team round 28), held to the cached baseline's level where it ran slower (round 36), and
    // at least three of its windows were timed.
    const double reference_ms = std::min(r.eager_paired->median_ms, r.eager->median_ms);
    EXPECT_NEAR(*r.speedup_eager, reference_ms / r.timing->median_ms, 1e-9 * *r.speedup_eager) << r.task;
    EXPECT_GE(r.eager_paired->trials, 3) << r.task;
    // Every CI solution's reference is finite on signed values, so that is what the calls were timed
    // on, the reference's too (red-team round 18: a fast path taken only on the task's own values).
    ASSERT_TRUE(r.timing_check) << r.task;
    EXPECT_EQ(r.timing_check->timed_inputs, "signed") << r.task;
  }
  // Their builds found torch/extension.h precompiled for -O2 (its build checks that GCC uses it).
  bool precompiled = false;
  for (const auto& e : fs::directory_iterator(test_cache() / "ext"))
    precompiled |= e.path().filename().string().rfind("pch-", 0) == 0 && fs::exists(e.path() / "torch/extension.h.gch");
  EXPECT_TRUE(precompiled) << "no ext/pch-*/torch/extension.h.gch in " << test_cache();
}

// A corpus of templates that share their native sources (tests/hacks, tests/threats, tests/claims):
// scripts/materialize_corpus.py writes it out, with a suite of the main tasks and the corpus's own.
fs::path materialized(const std::string& corpus) {
  const fs::path dst = test_cache() / (corpus + "-corpus");
  core::SpawnOptions o;
  o.argv = {cpu_config().python,
            (kRoot / "scripts" / "materialize_corpus.py").string(),
            (kRoot / "tests" / corpus).string(),
            dst.string(),
            "--suite",
            (kRoot / "tasks").string()};
  const auto run = core::run_to_completion(o, std::chrono::seconds(60));
  EXPECT_TRUE(run.status.exited && run.status.code == 0) << run.out;
  return dst;
}

TEST(Pipeline, HackCorpusIsCaughtOnCpu) {
  const fs::path corpus = materialized("hacks");
  expect_corpus(corpus / "tasks", corpus / "candidates", 20, cpu_config());
}

// A fresh corpus by threat class (tests/threats/README.md), written without looking at tests/hacks:
// native code that patches, forges, caches, offloads to libraries, or writes where others read.
TEST(Pipeline, ThreatCorpusIsCaughtOnCpu) {
  const fs::path corpus = materialized("threats");
  expect_corpus(corpus / "tasks", corpus / "candidates", 40, cpu_config());
}

// Issue 18's corpus (tests/claims/README.md): each file attacks something the judge used to believe.

// Sets an environment variable for the test's lifetime (the evaluator's processes inherit it).
struct ScopedEnv {
  std::string name;
  std::optional<std::string> before;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) before = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { before ? (void)::setenv(name.c_str(), before->c_str(), 1) : (void)::unsetenv(name.c_str()); }
};

// Every file under dir (links followed) whose bytes hold one of the needles.
std::vector<std::string> files_holding(const fs::path& dir, const std::vector<std::string>& needles) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string bytes = core::try_read_file(it->path()).value_or("");
    for (const auto& n : needles)
      if (bytes.find(n) != std::string::npos) found.push_back(it->path().string());
  }
  return found;
}

// The corpus runs with canaries where an evaluator's secrets would be: a variable in its environment
// (an API key's stand-in), a file in its $HOME and in its working directory. Its secrets__* files look
// for them everywhere a sandboxed process can; none may reach a result, a log or a cache.
TEST(Pipeline, ClaimsCorpusIsCaughtOnCpuAndNoSecretLeaks) {
  const fs::path corpus = materialized("claims");
  const std::string env_secret = "vinci-env-canary-" + core::content_hash(std::to_string(::getpid()) + "env");
  const std::string file_secret = "vinci-file-canary-" + core::content_hash(std::to_string(::getpid()) + "file");
  const fs::path home = test_cache() / "claims-home";
  fs::create_directories(home);
  std::ofstream(home / "vinci-canary-token.txt") << file_secret;
  const fs::path cwd_canary = fs::current_path() / "vinci-canary-token.txt";
  std::ofstream(cwd_canary) << file_secret;
  EvalConfig c = vinci::test::cpu_eval_config_in("claims-cache");
  c.use_cache = false;
  fs::remove_all(c.cache_dir / "logs");
  {
    const ScopedEnv secret("VINCI_TEST_API_KEY", env_secret), at_home("HOME", home.string());
    expect_corpus(corpus / "tasks", corpus / "candidates", 15, c);
  }
  fs::remove(cwd_canary);
  for (const auto& f : files_holding(c.cache_dir, {env_secret, file_secret}))
    ADD_FAILURE() << f << " holds a canary: a secret of the evaluator reached a candidate";
}

// Build bombs (tests/build_bombs) end at their limits, each named, in bounded time, and a build
// after them works. The limits are tightened so that the bombs end in seconds on the CI machine.
TEST(Pipeline, BuildBombsEndAtTheirLimits) {
  EvalConfig c = cpu_config();
  c.compile_memory_bytes = 3ull << 30;
  c.compile_cpu_seconds = 40;
  c.compile_disk_bytes = 1ull << 30;
  c.compile_output_bytes = 64ull << 20;
  c.compile_timeout = std::chrono::seconds(300);
  expect_corpus(kRoot / "tasks", kRoot / "tests" / "build_bombs", 4, c);
  const Suite suite = load_suite(kRoot / "tasks");
  const auto relu =
      std::find_if(suite.tasks.begin(), suite.tasks.end(), [](const Task& t) { return t.id == "level1/13_ReLU"; });
  ASSERT_NE(relu, suite.tasks.end());
  const auto after = EvaluatorPool(c).run(
      {{*relu, load_candidate(kRoot / "tasks" / "solutions" / "cpu" / "level1" / "13_ReLU.py")}}, nullptr);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].verdict, Verdict::correct) << after[0].reason << ": " << after[0].message;
}

TEST(Pipeline, ContainmentAndBadInput) {
  EvalConfig c = cpu_config();
  c.run_timeout = std::chrono::seconds(20);  // hang_forever must end here, not in an hour
  c.import_timeout = std::chrono::seconds(20);
  expect_corpus(kRoot / "tests" / "adversarial" / "tasks", kRoot / "tests" / "adversarial" / "candidates", 15, c);
}

// vinci eval --deadline: what is in flight is killed, what finished is written and summarised.
TEST(Pipeline, DeadlineKeepsWhatFinished) {
  const fs::path dir = test_cache() / "deadline-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "candidates");
  // Candidates go in file-name order: the one that finishes first, then the one that hangs. The
  // first is refused before any build or runner (about 2 s, rejected/no_custom_kernel), so the
  // deadline need not leave room for one; the second spins a core until the deadline.
  fs::copy_file(kRoot / "tests" / "adversarial" / "candidates" / "plain_pytorch_add.py",
                dir / "candidates" / "a_plain_pytorch_add.py");
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
            "20",
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
  EXPECT_NE(lines.find("a_plain_pytorch_add.py"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("b_hang.py"), std::string::npos) << lines;
}

}  // namespace pipeline_test
