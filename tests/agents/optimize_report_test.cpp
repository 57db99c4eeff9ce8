// What `vinci optimize` leaves behind, on a hand-built outcome: the summary table, the attempts
// file (each attempt once, though beam children copy their parents' turns), best_kernel.py and
// report.md.
#include "agents/optimize_report.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/files.h"
#include "support/jsonl.h"
#include "support/temp_dir.h"

namespace optimize_report_test {
using namespace vinci::agents;
using vinci::eval::Result;
using vinci::eval::Verdict;
namespace fs = std::filesystem;

PolicyTurn turn(int n, const std::string& file, std::optional<double> speedup, const std::string& code = "") {
  PolicyTurn t;
  t.turn = n;
  t.strategy = fmt::format("idea {}", n);
  t.code = code;
  t.file = file;
  Result r;
  r.verdict = speedup ? Verdict::correct : Verdict::incorrect;
  r.speedup_eager = speedup;
  t.result = r;
  return t;
}

// Scheme 0 (two skills): a parent with turns 0 and 1, and a beam child that copies turn 0 and adds
// its own turn 1. Scheme 1 (the null scheme): one turn without a usable answer.
OptimizeOutcome outcome() {
  OptimizeOutcome o;
  o.schemes = {SkillScheme{0, false, {"tiling", "vectorize"}, {}, {}}, SkillScheme{1, true, {}, {}, {}}};
  Rollout parent;
  parent.label = "s0";
  parent.scheme = 0;
  for (const char* name : {"tiling", "vectorize"}) {
    vinci::skills::Skill k;
    k.name = name;
    parent.skills.push_back(k);
  }
  parent.turns = {turn(0, "/c/s0_t0.py", std::nullopt), turn(1, "/c/s0_t1.py", 2.5, "best code\n")};
  Rollout child;
  child.label = "s0b";
  child.scheme = 0;
  child.skills = parent.skills;
  child.turns = {parent.turns[0], turn(1, "/c/s0b_t1.py", 1.5)};
  Rollout null_scheme;
  null_scheme.label = "null";
  null_scheme.scheme = 1;
  PolicyTurn unusable;
  unusable.parse_failure = "no_code_block";
  null_scheme.turns = {unusable};
  o.rollouts = {parent, child, null_scheme};
  o.best = std::make_pair(size_t{0}, size_t{1});
  return o;
}

TEST(OptimizeReport, TheSummaryTableCountsEachAttemptOnce) {
  const std::string table = summary_table(outcome());
  const std::string expected =
      fmt::format("{:<7} {:<48} {:>8} {:>8} {:>9}\n", "scheme", "skills", "attempts", "correct", "best") +
      fmt::format("{:<7} {:<48} {:>8} {:>8} {:>9}\n", 0, "tiling, vectorize", 3, 2, "2.50x") +
      fmt::format("{:<7} {:<48} {:>8} {:>8} {:>9}\n", 1, "(none: null scheme)", 1, 0, "0.00x") +
      "best: s0_t1.py (correct, 2.50x eager)\n"
      "skills: 0 summaries, 0 proposed, 0 refused, 0 verified, 0 admitted\n";
  EXPECT_EQ(table, expected);
}

TEST(OptimizeReport, NoCorrectKernelIsSaidSo) {
  OptimizeOutcome o = outcome();
  o.best.reset();
  EXPECT_NE(summary_table(o).find("best: no correct kernel\n"), std::string::npos);
}

TEST(OptimizeReport, OutputsListAttemptsOnceAndKeepTheBestKernel) {
  const vinci::test::TempDir dir("optimize-report");
  PolicyTask task;
  task.task.id = "level1/1_Relu";
  write_optimize_outputs(dir.path(), task, outcome());
  const auto attempts = vinci::test::read_jsonl(dir.path() / "attempts.jsonl");
  ASSERT_EQ(attempts.size(), 4u);  // s0_t0 once, though the child carries it too
  EXPECT_EQ(attempts[0]["file"], "s0_t0.py");
  EXPECT_EQ(attempts[0]["role"], "policy");
  EXPECT_EQ(attempts[0]["outcome"], "incorrect");
  EXPECT_EQ(attempts[1]["speedup"], 2.5);
  EXPECT_EQ(attempts[1]["skills"], nlohmann::json::array({"tiling", "vectorize"}));
  EXPECT_EQ(attempts[2]["label"], "s0b");
  EXPECT_EQ(attempts[3]["file"], nullptr);
  EXPECT_EQ(attempts[3]["outcome"], "no usable answer (no_code_block)");
  EXPECT_EQ(attempts[3]["result"], nullptr);
  EXPECT_EQ(vinci::core::read_file(dir.path() / "best_kernel.py"), "best code\n");
  EXPECT_EQ(vinci::core::read_file(dir.path() / "skills_admitted.jsonl"), "");
  const std::string report = vinci::core::read_file(dir.path() / "report.md");
  EXPECT_EQ(report.rfind("# vinci optimize: level1/1_Relu\n", 0), 0u) << report;
  EXPECT_NE(report.find("| s0_t1.py | tiling, vectorize | idea 1 | correct, 2.50x eager |"), std::string::npos)
      << report;
  EXPECT_NE(report.find("| null_t0 (no file) |  |  | no usable answer (no_code_block) |"), std::string::npos) << report;

  // A later run over the same folder without a correct kernel must not leave the old one behind.
  OptimizeOutcome none = outcome();
  none.best.reset();
  write_optimize_outputs(dir.path(), task, none);
  EXPECT_FALSE(fs::exists(dir.path() / "best_kernel.py"));
}
}  // namespace optimize_report_test
