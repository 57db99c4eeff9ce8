// fast_p, correctness rate, geomean speedup and results.jsonl reading, checked against values computed by hand.
#include "eval/metrics.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "support/hand_suite.h"

namespace vinci::eval {
namespace metrics_test {

using vinci::test::make_result;

const auto& kSuite = vinci::test::kHandSuite;
using vinci::test::hand_suite_results;

const LevelSummary& level(const Summary& s, int l) {
  for (const auto& x : s.levels)
    if (x.level == l) return x;
  throw std::out_of_range("no level " + std::to_string(l));
}

TEST(Metrics, FastPConstantsAndKeys) {
  ASSERT_EQ(kFastP.size(), 6u);
  EXPECT_EQ(fast_p_key(0.0), "fast_0");
  EXPECT_EQ(fast_p_key(0.5), "fast_0.5");
  EXPECT_EQ(fast_p_key(0.8), "fast_0.8");
  EXPECT_EQ(fast_p_key(1.0), "fast_1");
  EXPECT_EQ(fast_p_key(1.5), "fast_1.5");
  EXPECT_EQ(fast_p_key(2.0), "fast_2");
  EXPECT_EQ(baseline_from_string("eager"), Baseline::eager);
  EXPECT_EQ(baseline_from_string("compile"), Baseline::compile);
  EXPECT_EQ(to_string(Baseline::compile), "compile");
  EXPECT_THROW(baseline_from_string("inductor"), std::invalid_argument);
}

TEST(Metrics, Level1EagerByHand) {
  const Summary s = summarize(hand_suite_results(), kSuite, Baseline::eager);
  EXPECT_EQ(s.baseline, "eager");
  EXPECT_EQ(s.ignored_results, 1);  // level1/99_Extra
  ASSERT_EQ(s.levels.size(), 3u);
  const LevelSummary& l1 = level(s, 1);
  // N = 5 (5_F has no result and counts as a failure). Best speedups: A 0.4, B 0.8, C 1.0, D&E 2.5.
  EXPECT_EQ(l1.tasks, 5);
  EXPECT_EQ(l1.results, 6);  // 1 + 1 + 1 + 3
  EXPECT_EQ(l1.missing, 1);
  EXPECT_EQ(l1.correct, 4);
  EXPECT_EQ(l1.with_speedup, 4);
  // correctness = 4/5
  EXPECT_DOUBLE_EQ(l1.correctness_rate, 4.0 / 5);
  // fast_0   = #{A,B,C,D&E} / 5 = 4/5 (equals the correctness rate)
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.0), 4.0 / 5);
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.0), l1.correctness_rate);
  // fast_0.5 = #{B 0.8, C 1.0, D&E 2.5} / 5 = 3/5
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.5), 3.0 / 5);
  // fast_0.8 = #{C 1.0, D&E 2.5} / 5 = 2/5   (B is exactly 0.8: strict >, not counted)
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.8), 2.0 / 5);
  // fast_1   = #{D&E 2.5} / 5 = 1/5          (C is exactly 1.0: not counted)
  EXPECT_DOUBLE_EQ(l1.fast_p.at(1.0), 1.0 / 5);
  // fast_1.5 = #{D&E 2.5} / 5 = 1/5          (best of several: 2.5, not the 1.6 candidate nor the incorrect 9.0)
  EXPECT_DOUBLE_EQ(l1.fast_p.at(1.5), 1.0 / 5);
  // fast_2   = #{D&E 2.5} / 5 = 1/5
  EXPECT_DOUBLE_EQ(l1.fast_p.at(2.0), 1.0 / 5);
  // geomean = (0.4 · 0.8 · 1.0 · 2.5)^(1/4) = 0.8^(1/4) = 0.945741609003176...
  ASSERT_TRUE(l1.geomean_speedup);
  EXPECT_NEAR(*l1.geomean_speedup, std::pow(0.4 * 0.8 * 1.0 * 2.5, 0.25), 1e-12);
  EXPECT_NEAR(*l1.geomean_speedup, 0.9457416090031758, 1e-12);
  // by class: all candidates counted
  EXPECT_EQ(l1.by_class.at("correct"), 5);
  EXPECT_EQ(l1.by_class.at("incorrect"), 1);
  EXPECT_EQ(l1.by_class.size(), 2u);
}

TEST(Metrics, Level2EagerByHand) {
  const Summary s = summarize(hand_suite_results(), kSuite, Baseline::eager);
  const LevelSummary& l2 = level(s, 2);
  // N = 3. X correct 1.6; Y never correct; Z correct without a speedup (counts for fast_0 only).
  EXPECT_EQ(l2.tasks, 3);
  EXPECT_EQ(l2.results, 4);
  EXPECT_EQ(l2.missing, 0);
  EXPECT_EQ(l2.correct, 2);
  EXPECT_EQ(l2.with_speedup, 1);
  // fast_0 = #{X, Z} / 3 = 2/3
  EXPECT_DOUBLE_EQ(l2.correctness_rate, 2.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.0), 2.0 / 3);
  // fast_0.5 .. fast_1.5 = #{X 1.6} / 3 = 1/3   (1.6 > 1.5)
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.5), 1.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.8), 1.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(1.0), 1.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(1.5), 1.0 / 3);
  // fast_2 = 0/3
  EXPECT_DOUBLE_EQ(l2.fast_p.at(2.0), 0.0);
  // geomean over correct results with a speedup only: (1.6)^(1/1) = 1.6
  ASSERT_TRUE(l2.geomean_speedup);
  EXPECT_NEAR(*l2.geomean_speedup, 1.6, 1e-12);
  EXPECT_EQ(l2.by_class.at("correct"), 2);
  EXPECT_EQ(l2.by_class.at("incorrect"), 1);
  EXPECT_EQ(l2.by_class.at("compile_error"), 1);
}

TEST(Metrics, EmptyLevelListedInSuite) {
  const Summary s = summarize(hand_suite_results(), kSuite, Baseline::eager);
  const LevelSummary& l3 = level(s, 3);
  EXPECT_EQ(l3.tasks, 0);
  EXPECT_EQ(l3.results, 0);
  EXPECT_EQ(l3.correct, 0);
  EXPECT_DOUBLE_EQ(l3.correctness_rate, 0.0);
  for (double p : kFastP) EXPECT_DOUBLE_EQ(l3.fast_p.at(p), 0.0) << p;
  EXPECT_FALSE(l3.geomean_speedup);
  const nlohmann::json j = to_json(s);
  EXPECT_TRUE(j["levels"]["3"]["fast_1"].is_null());
  EXPECT_TRUE(j["levels"]["3"]["correctness_rate"].is_null());
  EXPECT_TRUE(j["levels"]["3"]["geomean_speedup"].is_null());
}

TEST(Metrics, OverallEagerByHand) {
  const Summary s = summarize(hand_suite_results(), kSuite, Baseline::eager);
  const LevelSummary& o = s.overall;
  // N = 5 + 3 + 0 = 8. Correct: A, B, C, D&E, X, Z = 6. Speedups: 0.4, 0.8, 1.0, 2.5, 1.6.
  EXPECT_EQ(o.tasks, 8);
  EXPECT_EQ(o.results, 10);  // 6 + 4; the ignored result is not counted
  EXPECT_EQ(o.missing, 1);
  EXPECT_EQ(o.correct, 6);
  EXPECT_EQ(o.with_speedup, 5);
  EXPECT_DOUBLE_EQ(o.fast_p.at(0.0), 6.0 / 8);  // 0.75
  EXPECT_DOUBLE_EQ(o.correctness_rate, 6.0 / 8);
  EXPECT_DOUBLE_EQ(o.fast_p.at(0.5), 4.0 / 8);  // B 0.8, C 1.0, D&E 2.5, X 1.6
  EXPECT_DOUBLE_EQ(o.fast_p.at(0.8), 3.0 / 8);  // C, D&E, X
  EXPECT_DOUBLE_EQ(o.fast_p.at(1.0), 2.0 / 8);  // D&E, X
  EXPECT_DOUBLE_EQ(o.fast_p.at(1.5), 2.0 / 8);  // D&E 2.5, X 1.6
  EXPECT_DOUBLE_EQ(o.fast_p.at(2.0), 1.0 / 8);  // D&E
  // geomean = (0.4 · 0.8 · 1.0 · 2.5 · 1.6)^(1/5) = 1.28^(1/5) = 1.050611121761...
  ASSERT_TRUE(o.geomean_speedup);
  EXPECT_NEAR(*o.geomean_speedup, std::pow(0.4 * 0.8 * 1.0 * 2.5 * 1.6, 0.2), 1e-12);
  EXPECT_NEAR(*o.geomean_speedup, 1.0506111217615068, 1e-12);
}

TEST(Metrics, CompileBaselineSelection) {
  const Summary s = summarize(hand_suite_results(), kSuite, Baseline::compile);
  EXPECT_EQ(s.baseline, "compile");
  const LevelSummary& l1 = level(s, 1);
  // Compile speedups: A 0.2, B 0.5, C 0.9, D&E best of {1.2, 1.0} = 1.2 (a different candidate than for eager).
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.0), 4.0 / 5);
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.5), 2.0 / 5);  // C 0.9, D&E 1.2  (B exactly 0.5: not counted)
  EXPECT_DOUBLE_EQ(l1.fast_p.at(0.8), 2.0 / 5);  // C 0.9, D&E 1.2
  EXPECT_DOUBLE_EQ(l1.fast_p.at(1.0), 1.0 / 5);  // D&E 1.2
  EXPECT_DOUBLE_EQ(l1.fast_p.at(1.5), 0.0);
  EXPECT_DOUBLE_EQ(l1.fast_p.at(2.0), 0.0);
  // geomean = (0.2 · 0.5 · 0.9 · 1.2)^(1/4) = 0.108^(1/4) = 0.57327...
  ASSERT_TRUE(l1.geomean_speedup);
  EXPECT_NEAR(*l1.geomean_speedup, std::pow(0.2 * 0.5 * 0.9 * 1.2, 0.25), 1e-12);

  const LevelSummary& l2 = level(s, 2);
  // X compile 0.8 exactly: counts for fast_0.5, not for fast_0.8.
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.0), 2.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.5), 1.0 / 3);
  EXPECT_DOUBLE_EQ(l2.fast_p.at(0.8), 0.0);
  EXPECT_NEAR(*l2.geomean_speedup, 0.8, 1e-12);

  // overall: speedups 0.2, 0.5, 0.9, 1.2, 0.8; N = 8
  EXPECT_DOUBLE_EQ(s.overall.fast_p.at(0.5), 3.0 / 8);  // 0.9, 1.2, 0.8
  EXPECT_DOUBLE_EQ(s.overall.fast_p.at(0.8), 2.0 / 8);  // 0.9, 1.2
  EXPECT_DOUBLE_EQ(s.overall.fast_p.at(1.0), 1.0 / 8);  // 1.2
  EXPECT_NEAR(*s.overall.geomean_speedup, std::pow(0.2 * 0.5 * 0.9 * 1.2 * 0.8, 0.2), 1e-12);
}

TEST(Metrics, StrictComparisonAtExactThresholds) {
  // One task per threshold, each exactly at p: none counts for its own fast_p.
  std::map<int, std::vector<std::string>> suite{{1, {"a", "b", "c", "d", "e"}}};
  std::vector<Result> rs{make_result("a", 1, Verdict::correct, 0.5), make_result("b", 1, Verdict::correct, 0.8),
                         make_result("c", 1, Verdict::correct, 1.0), make_result("d", 1, Verdict::correct, 1.5),
                         make_result("e", 1, Verdict::correct, 2.0)};
  const LevelSummary l = summarize(rs, suite).levels.at(0);
  EXPECT_DOUBLE_EQ(l.fast_p.at(0.0), 5.0 / 5);
  EXPECT_DOUBLE_EQ(l.fast_p.at(0.5), 4.0 / 5);  // 0.5 itself excluded
  EXPECT_DOUBLE_EQ(l.fast_p.at(0.8), 3.0 / 5);
  EXPECT_DOUBLE_EQ(l.fast_p.at(1.0), 2.0 / 5);  // 1.0 itself excluded
  EXPECT_DOUBLE_EQ(l.fast_p.at(1.5), 1.0 / 5);
  EXPECT_DOUBLE_EQ(l.fast_p.at(2.0), 0.0);  // 2.0 itself excluded
}

TEST(Metrics, AllMissingCountAsFailures) {
  std::map<int, std::vector<std::string>> suite{{1, {"a", "b", "c", "d"}}};
  std::vector<Result> rs{make_result("b", 1, Verdict::correct, 3.0)};
  const Summary s = summarize(rs, suite);
  const LevelSummary& l = s.levels.at(0);
  EXPECT_EQ(l.tasks, 4);
  EXPECT_EQ(l.missing, 3);
  for (double p : kFastP) EXPECT_DOUBLE_EQ(l.fast_p.at(p), 1.0 / 4) << p;  // b only, 3.0 > every p
  EXPECT_NEAR(*l.geomean_speedup, 3.0, 1e-12);
}

TEST(Metrics, BestOfSeveralPrefersSpeedupAndIgnoresIncorrect) {
  std::map<int, std::vector<std::string>> suite{{1, {"t"}}};
  // correct without speedup, then an incorrect one with a big speedup, then correct 1.3, then correct 1.1.
  std::vector<Result> rs{make_result("t", 1, Verdict::correct), make_result("t", 1, Verdict::incorrect, 50.0),
                         make_result("t", 1, Verdict::correct, 1.3), make_result("t", 1, Verdict::correct, 1.1)};
  const auto outcomes = task_outcomes(rs, suite, Baseline::eager);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].correct);
  EXPECT_EQ(outcomes[0].results, 4);
  ASSERT_TRUE(outcomes[0].speedup);
  EXPECT_DOUBLE_EQ(*outcomes[0].speedup, 1.3);
  const LevelSummary l = summarize(rs, suite).levels.at(0);
  EXPECT_EQ(l.tasks, 1);  // one task, whatever the number of candidates
  EXPECT_DOUBLE_EQ(l.fast_p.at(1.0), 1.0);
  EXPECT_DOUBLE_EQ(l.fast_p.at(1.5), 0.0);
  EXPECT_NEAR(*l.geomean_speedup, 1.3, 1e-12);
}

TEST(Metrics, LaunchBoundFollowsTheBestResult) {
  // t: launch-bound at 1.3x, then a better 1.6x timed on the kernels: the best is not launch-bound.
  // u: 2.0x launch-bound beats 1.2x: launch-bound. v: only an incorrect launch-bound result. w: correct, no speedup,
  // launch-bound. So 2 of the 3 correct tasks (u, w).
  const auto flagged = [](Result r) {
    r.flags = {"timing_charged", "launch_bound"};
    return r;
  };
  std::map<int, std::vector<std::string>> suite{{1, {"t", "u", "v", "w"}}};
  std::vector<Result> rs{flagged(make_result("t", 1, Verdict::correct, 1.3)),
                         make_result("t", 1, Verdict::correct, 1.6),
                         make_result("u", 1, Verdict::correct, 1.2),
                         flagged(make_result("u", 1, Verdict::correct, 2.0)),
                         flagged(make_result("v", 1, Verdict::incorrect, 3.0)),
                         flagged(make_result("w", 1, Verdict::correct))};
  const auto outcomes = task_outcomes(rs, suite, Baseline::eager);
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_FALSE(outcomes[0].launch_bound);
  EXPECT_TRUE(outcomes[1].launch_bound);
  EXPECT_FALSE(outcomes[2].launch_bound);
  EXPECT_TRUE(outcomes[3].launch_bound);
  const Summary s = summarize(rs, suite);
  EXPECT_EQ(s.overall.correct, 3);
  EXPECT_EQ(s.overall.launch_bound, 2);
  EXPECT_EQ(to_json(s)["overall"]["launch_bound"], 2);
  EXPECT_NE(format_table(s).find("2 of the 3 correct tasks were timed launch-bound"), std::string::npos);
  EXPECT_EQ(format_table(summarize(hand_suite_results(), kSuite)).find("launch-bound"), std::string::npos);
}

TEST(Metrics, CorrectWithoutSpeedupCountsForFast0Only) {
  std::map<int, std::vector<std::string>> suite{{1, {"a", "b"}}};
  // a: correct, no baseline; b: correct with a speedup that is not usable (NaN, then -1): treated as absent.
  std::vector<Result> rs{make_result("a", 1, Verdict::correct), make_result("b", 1, Verdict::correct, std::nan("")),
                         make_result("b", 1, Verdict::correct, -1.0)};
  const LevelSummary l = summarize(rs, suite).levels.at(0);
  EXPECT_DOUBLE_EQ(l.fast_p.at(0.0), 1.0);
  for (double p : kFastP) {
    if (p > 0) {
      EXPECT_DOUBLE_EQ(l.fast_p.at(p), 0.0) << p;
    }
  }
  EXPECT_EQ(l.with_speedup, 0);
  EXPECT_FALSE(l.geomean_speedup);  // no correct result with a speedup
}

TEST(Metrics, NoSuiteUsesDistinctTasksOfTheResults) {
  // level 1: a (two correct candidates: 1.5 and 0.9 -> best 1.5), b incorrect -> N = 2
  // level 2: c correct 3.0 -> N = 1
  std::vector<Result> rs{make_result("a", 1, Verdict::correct, 1.5), make_result("a", 1, Verdict::correct, 0.9),
                         make_result("b", 1, Verdict::incorrect), make_result("c", 2, Verdict::correct, 3.0)};
  const Summary s = summarize(rs, {});
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.ignored_results, 0);
  EXPECT_EQ(level(s, 1).tasks, 2);
  EXPECT_EQ(level(s, 1).results, 3);
  EXPECT_DOUBLE_EQ(level(s, 1).fast_p.at(0.0), 1.0 / 2);
  EXPECT_DOUBLE_EQ(level(s, 1).fast_p.at(1.0), 1.0 / 2);  // a: 1.5
  EXPECT_DOUBLE_EQ(level(s, 1).fast_p.at(1.5), 0.0);      // 1.5 is not > 1.5
  EXPECT_EQ(level(s, 2).tasks, 1);
  EXPECT_DOUBLE_EQ(level(s, 2).fast_p.at(2.0), 1.0);
  // overall: N = 3; geomean = (1.5 · 3.0)^(1/2) = sqrt(4.5) = 2.1213...
  EXPECT_EQ(s.overall.tasks, 3);
  EXPECT_DOUBLE_EQ(s.overall.fast_p.at(0.0), 2.0 / 3);
  EXPECT_NEAR(*s.overall.geomean_speedup, std::sqrt(4.5), 1e-12);
}

TEST(Metrics, SuiteLevelWinsOverResultLevel) {
  std::map<int, std::vector<std::string>> suite{{2, {"t"}}};
  std::vector<Result> rs{make_result("t", 7, Verdict::correct, 2.0)};
  const Summary s = summarize(rs, suite);
  ASSERT_EQ(s.levels.size(), 1u);
  EXPECT_EQ(s.levels[0].level, 2);
  EXPECT_DOUBLE_EQ(s.levels[0].fast_p.at(1.5), 1.0);
}

TEST(Metrics, NothingAtAll) {
  const Summary s = summarize({}, {});
  EXPECT_TRUE(s.levels.empty());
  EXPECT_EQ(s.overall.tasks, 0);
  EXPECT_FALSE(s.overall.geomean_speedup);
  const nlohmann::json j = to_json(s);
  EXPECT_TRUE(j["levels"].is_object());
  EXPECT_TRUE(j["levels"].empty());
  EXPECT_TRUE(j["overall"]["fast_0"].is_null());
  EXPECT_NO_THROW(format_table(s));
}

TEST(Metrics, JsonShape) {
  const nlohmann::json j = to_json(summarize(hand_suite_results(), kSuite, Baseline::eager));
  EXPECT_EQ(j["baseline"], "eager");
  EXPECT_EQ(j["ignored_results"], 1);
  ASSERT_TRUE(j["levels"].contains("1"));
  ASSERT_TRUE(j["levels"].contains("2"));
  const auto& l1 = j["levels"]["1"];
  for (const char* k : {"fast_0", "fast_0.5", "fast_0.8", "fast_1", "fast_1.5", "fast_2"})
    EXPECT_TRUE(l1.contains(k)) << k;
  EXPECT_DOUBLE_EQ(l1["fast_0.8"].get<double>(), 2.0 / 5);
  EXPECT_EQ(l1["tasks"], 5);
  EXPECT_EQ(l1["by_class"]["correct"], 5);
  EXPECT_NEAR(j["overall"]["geomean_speedup"].get<double>(), std::pow(1.28, 0.2), 1e-12);
  EXPECT_EQ(j["overall"]["tasks"], 8);
}

TEST(Metrics, TableHasRowsAndPercentages) {
  const std::string t = format_table(summarize(hand_suite_results(), kSuite, Baseline::eager));
  EXPECT_NE(t.find("fast_0.5"), std::string::npos);
  EXPECT_NE(t.find("geomean"), std::string::npos);
  EXPECT_NE(t.find("80.0%"), std::string::npos);   // level 1 fast_0
  EXPECT_NE(t.find("66.7%"), std::string::npos);   // level 2 fast_0
  EXPECT_NE(t.find("12.5%"), std::string::npos);   // overall fast_2
  EXPECT_NE(t.find("0.946x"), std::string::npos);  // level 1 geomean
  EXPECT_NE(t.find("all"), std::string::npos);
  EXPECT_NE(t.find("ignored"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------------
// results.jsonl

std::filesystem::path temp_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("vinci_metrics_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

TEST(ReadResultsJsonl, MalformedLineNamesFileAndLine) {
  const auto path = temp_file("bad.jsonl");
  {
    std::ofstream out(path);
    out << nlohmann::json(to_json(make_result("a", 1, Verdict::correct, 1.0))).dump() << "\n";
    out << "\n";                                          // blank line 2: skipped, but still counted for line numbers
    out << "{\"task\": \"b\", \"class\": \"correct\"\n";  // line 3: truncated JSON
  }
  try {
    read_results_jsonl(path);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path.string() + ":3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("parse"), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
}

TEST(ReadResultsJsonl, MissingFieldNamesTheField) {
  const auto path = temp_file("missing_field.jsonl");
  {
    std::ofstream out(path);
    out << to_json(make_result("a", 1, Verdict::correct, 1.0)).dump() << "\n";
    out << "{\"class\": \"correct\", \"level\": 1}\n";  // line 2: no "task"
  }
  try {
    read_results_jsonl(path);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(":2:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("task"), std::string::npos) << msg;
  }
  {
    std::ofstream out(path);
    out << "{\"task\": \"a\", \"class\": \"brilliant\"}\n";  // line 1: unknown class
  }
  try {
    read_results_jsonl(path);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(":1:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("brilliant"), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
}

TEST(ReadResultsJsonl, TornLastLineIsSkipped) {
  // A run killed mid-write leaves its last record without a newline: the records before it are read.
  const auto path = temp_file("torn.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    out << to_json(make_result("a", 1, Verdict::correct, 1.0)).dump() << "\n";
    out << to_json(make_result("b", 1, Verdict::incorrect)).dump() << "\n";
    out << "{\"task\": \"c\", \"cla";
  }
  const std::vector<Result> back = read_results_jsonl(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].task, "a");
  EXPECT_EQ(back[1].task, "b");
  std::filesystem::remove(path);
}

TEST(ReadResultsJsonl, MissingFileThrows) {
  EXPECT_THROW(read_results_jsonl(temp_file("does_not_exist.jsonl")), std::runtime_error);
}

TEST(ReadResultsJsonl, RoundTripWithBlankLinesAndCrlf) {
  const std::vector<Result> in = hand_suite_results();
  const auto path = temp_file("round_trip.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    out << "\n";
    for (size_t i = 0; i < in.size(); ++i) {
      out << to_json(in[i]).dump() << (i % 2 ? "\r\n" : "\n");  // CRLF on every other line
      if (i == 3) out << "   \n";                               // a whitespace-only line
    }
  }
  const std::vector<Result> back = read_results_jsonl(path);
  ASSERT_EQ(back.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(to_json(back[i]), to_json(in[i])) << i;
  }
  // The same summary from the file as from memory.
  EXPECT_EQ(to_json(summarize(back, kSuite)), to_json(summarize(in, kSuite)));
  std::filesystem::remove(path);
}

}  // namespace metrics_test
}  // namespace vinci::eval
