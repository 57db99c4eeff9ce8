// Candidate files: the header lines they carry (task, expectation, devices) and how a verdict
// is judged against an expectation. Matching candidates to a suite is in task_test.cpp.
#include "eval/candidate.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/hash.h"
#include "support/temp_dir.h"

namespace candidate_test {
using namespace vinci::eval;
namespace fs = std::filesystem;

Candidate load(const vinci::test::TempDir& dir, const std::string& text) {
  const fs::path file = dir.path() / "cand.py";
  std::ofstream(file) << text;
  return load_candidate(file);
}

TEST(Candidate, HeadersAreReadWithTheirSpacing) {
  const vinci::test::TempDir dir("candidate");
  const Candidate c = load(dir,
                           "#vinci-task:   level1/23_Softmax  \n#  vinci-devices: cpu,,cuda,\n"
                           "# vinci-expect: rejected/torch_op|crashed/\nimport torch\n");
  EXPECT_EQ(c.task_header.value_or(""), "level1/23_Softmax");
  EXPECT_EQ(c.expect.value_or(""), "rejected/torch_op|crashed/");
  // Empty items of the comma list are dropped.
  EXPECT_EQ(c.devices, (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(c.hash, vinci::core::content_hash(c.source));
}

TEST(Candidate, OnlyTheFirstTwelveLinesAreHeaders) {
  // A header deep in the file is code or a comment about it, not a label of the file.
  const vinci::test::TempDir dir("candidate");
  std::string text;
  for (int i = 0; i < 12; ++i) text += "x = 1\n";
  const Candidate late = load(dir, text + "# vinci-task: level1/1_A\n");
  EXPECT_FALSE(late.task_header);
  const Candidate on_twelfth = load(dir, text.substr(0, 11 * 6) + "# vinci-task: level1/1_A\n");
  EXPECT_EQ(on_twelfth.task_header.value_or(""), "level1/1_A");
}

TEST(Candidate, AHeaderMustBeAWholeLineOfOneValue) {
  const vinci::test::TempDir dir("candidate");
  EXPECT_FALSE(load(dir, "x = 1  # vinci-task: level1/1_A\n").task_header);
  EXPECT_FALSE(load(dir, "# vinci-task: level1/1_A and more\n").task_header);
  EXPECT_FALSE(load(dir, "# vinci-task:\n").task_header);
}

TEST(Candidate, NoDevicesHeaderRunsAnywhere) {
  Candidate c;
  EXPECT_TRUE(c.runs_on("cpu"));
  EXPECT_TRUE(c.runs_on("cuda"));
  c.devices = {"cuda"};
  EXPECT_FALSE(c.runs_on("cpu"));
  EXPECT_TRUE(c.runs_on("cuda"));
}

TEST(Candidate, ExpectationAlternativesAndAnyReason) {
  Candidate c;
  EXPECT_TRUE(c.expectation_met("anything", "at all"));  // no expectation
  c.expect = "rejected/torch_op|crashed/";
  EXPECT_TRUE(c.expectation_met("rejected", "torch_op"));
  EXPECT_FALSE(c.expectation_met("rejected", "timeout"));
  EXPECT_TRUE(c.expectation_met("crashed", "segfault"));  // "crashed/": any reason
  EXPECT_FALSE(c.expectation_met("correct", ""));
  c.expect = "rejected";  // a class without '/' also takes any reason
  EXPECT_TRUE(c.expectation_met("rejected", "torch_op"));
  EXPECT_FALSE(c.expectation_met("reject", "torch_op"));  // the class must match whole
}

// A timing lie may end correct, but never credited with the speed it pretends: a correct verdict
// must then also be below the bound; other verdicts are judged by the label alone.
TEST(Candidate, ASpeedBoundHoldsCorrectVerdictsBelowIt) {
  const vinci::test::TempDir dir("candidate");
  const Candidate c = load(dir, "# vinci-expect: correct/|rejected/monkey_patch\n# vinci-expect-speedup-below: 0.5\n");
  EXPECT_EQ(c.speedup_below, 0.5);
  EXPECT_TRUE(c.expectation_met("correct", "", 0.49));
  EXPECT_FALSE(c.expectation_met("correct", "", 0.5));
  EXPECT_FALSE(c.expectation_met("correct", "", std::nullopt));  // a correct result with no speed proves nothing
  EXPECT_TRUE(c.expectation_met("rejected", "monkey_patch"));
  EXPECT_FALSE(c.expectation_met("incorrect", "mismatch", 0.1));
  EXPECT_THROW(load(dir, "# vinci-expect: correct/\n# vinci-expect-speedup-below: fast\n"), std::runtime_error);
  EXPECT_THROW(load(dir, "# vinci-expect: correct/\n# vinci-expect-speedup-below: -1\n"), std::runtime_error);
}

TEST(Candidate, AMissingFolderIsAnError) {
  const vinci::test::TempDir dir("candidate");
  try {
    match_candidates(Suite{}, dir.path() / "nope");
    FAIL() << "a missing folder was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "nope").string()), std::string::npos) << e.what();
  }
}

TEST(Candidate, UnmatchedFilesSayWhy) {
  const vinci::test::TempDir dir("candidate");
  Suite suite;
  Task t;
  t.id = "level1/1_Matmul";
  t.level = 1;
  t.number = 1;
  t.name = "Matmul";
  t.file = dir.path() / "tasks" / "level1" / "1_Matmul.py";
  suite.tasks.push_back(t);
  fs::create_directories(dir.path() / "c");
  std::ofstream(dir.path() / "c" / "a.py") << "# vinci-task: level9/9_Nope\n";
  std::ofstream(dir.path() / "c" / "b.py") << "x = 1\n";
  std::ofstream(dir.path() / "c" / "level_1_problem_2.py") << "x = 1\n";
  std::ofstream(dir.path() / "c" / "__init__.py") << "";
  std::ofstream(dir.path() / "c" / "notes.txt") << "";
  // A header may name the task by its file stem when only one task has it.
  std::ofstream(dir.path() / "c" / "z.py") << "# vinci-task: 1_Matmul\n";
  const Pairing p = match_candidates(suite, dir.path() / "c");
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].second.file.filename(), "z.py");
  ASSERT_EQ(p.unmatched.size(), 3u);  // sorted by path; __init__.py and notes.txt are not candidates
  EXPECT_NE(p.unmatched[0].find("a.py: its header names task 'level9/9_Nope'"), std::string::npos) << p.unmatched[0];
  EXPECT_NE(p.unmatched[1].find("b.py: its name matches no task"), std::string::npos) << p.unmatched[1];
  EXPECT_NE(p.unmatched[2].find("level_1_problem_2.py: no task level 1 number 2"), std::string::npos) << p.unmatched[2];
}
}  // namespace candidate_test
