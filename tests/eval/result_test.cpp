// results.jsonl records: verdict names, the JSON layout others read (README, scripts), defaults
// for older or partial lines, and errors naming the field.
#include "eval/result.h"

#include <gtest/gtest.h>

namespace result_test {
using namespace vinci::eval;
using nlohmann::json;

std::string error_of(const json& j) {
  try {
    result_from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Result, VerdictNamesRoundTrip) {
  for (const char* name :
       {"correct", "incorrect", "rejected", "compile_error", "runtime_error", "timeout", "invalid_task"})
    EXPECT_EQ(to_string(verdict_from_string(name)), name);
  try {
    verdict_from_string("Correct");
    FAIL() << "verdict names are case-sensitive";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'Correct'"), std::string::npos) << e.what();
  }
}

TEST(Result, AMinimalLineTakesDefaults) {
  const Result r = result_from_json({{"task", "level1/1_Matmul"}, {"class", "timeout"}});
  EXPECT_EQ(r.task, "level1/1_Matmul");
  EXPECT_EQ(r.verdict, Verdict::timeout);
  EXPECT_FALSE(r.correct());
  EXPECT_EQ(r.level, 0);
  EXPECT_FALSE(r.timing);
  EXPECT_FALSE(r.speedup_eager);
  EXPECT_FALSE(r.cached);
  EXPECT_TRUE(r.profile.empty());
}

TEST(Result, MissingOrMalformedFieldsAreNamed) {
  EXPECT_NE(error_of({{"class", "correct"}}).find("task"), std::string::npos);
  EXPECT_NE(error_of({{"task", "t"}}).find("class"), std::string::npos);
  EXPECT_NE(error_of({{"task", "t"}, {"class", "great"}}).find("'great'"), std::string::npos);
  EXPECT_NE(error_of({{"task", "t"}, {"class", "correct"}, {"timing", {{"trials", 3}}}}).find("median_ms"),
            std::string::npos);
  EXPECT_NE(error_of({{"task", "t"}, {"class", "correct"}, {"level", "one"}}).find("malformed result"),
            std::string::npos);
}

TEST(Result, NullOptionalsReadAsAbsent) {
  const Result r = result_from_json(
      {{"task", "t"}, {"class", "correct"}, {"speedup_eager", nullptr}, {"timing", nullptr}, {"coverage", 0.5}});
  EXPECT_FALSE(r.speedup_eager);
  EXPECT_FALSE(r.timing);
  EXPECT_EQ(r.coverage.value_or(-1), 0.5);
}

TEST(Result, AbsentValuesAreLeftOutOfTheLine) {
  Result r;
  r.task = "t";
  r.verdict = Verdict::incorrect;
  const json j = to_json(r);
  EXPECT_EQ(j["class"], "incorrect");
  for (const char* key : {"trials", "max_abs_diff", "timing", "compile", "speedup_eager", "custom_launches", "profile",
                          "flags", "phase_seconds"})
    EXPECT_FALSE(j.contains(key)) << key;
  // A correct result always says how many launches it made, even none.
  r.verdict = Verdict::correct;
  EXPECT_EQ(to_json(r)["custom_launches"], 0);
}

TEST(Result, EveryFieldSurvivesARoundTrip) {
  Result r;
  r.task = "level2/5_Conv2d_ReLU";
  r.level = 2;
  r.task_number = 5;
  r.task_name = "Conv2d_ReLU";
  r.candidate = "c/x.py";
  r.candidate_hash = "abc";
  r.device = "cpu (x86_64, 2 cores)";
  r.protocol = "kernelbench";
  r.sandbox = "bwrap+seccomp";
  r.verdict = Verdict::correct;
  r.reason = "ok";
  r.message = "fine — really";
  r.trials = 5;
  r.trials_passed = 5;
  r.max_abs_diff = 1e-6;
  r.mean_abs_diff = 1e-7;
  r.timing = TimingStats{100, 1.0, 1.1, 0.1, 0.9, 1.5, 0.95, 1.2};
  r.eager = TimingStats{100, 2.0, 2.0, 0.0, 2.0, 2.0, 2.0, 2.0};
  r.compiled = TimingStats{50, 1.5, 1.5, 0.0, 1.5, 1.5, 1.5, 1.5};
  r.eager_paired = TimingStats{50, 1.9, 1.9, 0.0, 1.9, 1.9, 1.9, 1.9};
  r.timing_check = TimingCheck{"wall", 4,   25,    10,    10,  100 << 20, "signed", 0.25,  1.5,
                               2.5,    9.0, 0.125, 0.375, 140, 0,         812,      0.875, 1.0};
  r.speedup_eager = 2.0;
  r.speedup_eager_interval = Interval{1.8, 2.3};
  r.speedup_compile = 1.5;
  r.coverage = 0.9;
  r.custom_launches = 3;
  r.profile = {KernelTime{"relu_kernel", 2, 12.5, true}};
  r.flags = {"beats_roofline"};
  r.warnings = {"w"};
  r.skipped_trials = {"nan_inputs"};
  r.cached = true;
  r.eval_seconds = 4.5;
  r.phase_seconds = {{"build", 3.0}, {"time", 1.5}};
  const json j = to_json(r);
  // The baseline compile timing is stored under "compile", the verdict under "class".
  EXPECT_TRUE(j.contains("compile"));
  EXPECT_EQ(j["speedup_eager_interval"], json::array({1.8, 2.3}));
  EXPECT_FALSE(j.contains("speedup_compile_interval"));
  const Result b = result_from_json(j);
  EXPECT_EQ(to_json(b), j);
  EXPECT_EQ(b.timing->p90_ms, 1.2);
  EXPECT_EQ(b.compiled->trials, 50);
  EXPECT_EQ(b.eager_paired->median_ms, 1.9);
  EXPECT_EQ(b.timing_check->calls_per_window, 4);
  EXPECT_EQ(b.timing_check->windows, 25);
  EXPECT_EQ(b.timing_check->planned_windows, 10);
  EXPECT_EQ(b.timing_check->compiled_samples, 140);
  EXPECT_EQ(b.timing_check->gpu_library_samples, 0);
  EXPECT_EQ(b.timing_check->host_samples, 812);
  EXPECT_EQ(b.timing_check->flush_bytes, uint64_t{100} << 20);
  EXPECT_EQ(b.timing_check->timed_inputs, "signed");
  EXPECT_EQ(b.timing_check->gpu_busy_share, 0.25);
  EXPECT_EQ(b.timing_check->watched_ms, 1.5);
  EXPECT_EQ(b.timing_check->watched_allowed_ms, 2.5);
  EXPECT_EQ(b.timing_check->profiled_ms, 9.0);
  EXPECT_EQ(b.timing_check->library_ms_per_call, 0.125);
  EXPECT_EQ(b.timing_check->library_share, 0.375);
  EXPECT_EQ(b.timing_check->biased_median_ms, 0.875);
  EXPECT_EQ(b.timing_check->plain_median_ms, 1.0);
  EXPECT_EQ(b.speedup_eager_interval, (Interval{1.8, 2.3}));
  EXPECT_EQ(b.profile.at(0).name, "relu_kernel");
  EXPECT_TRUE(b.profile.at(0).custom);
  EXPECT_EQ(b.phase_seconds.at("build"), 3.0);
}

TEST(Result, PartialTimingFallsBackToTheMedian) {
  // Older lines and the worker's short form carry only the median.
  const TimingStats t = timing_from_json({{"median_ms", 2.5}});
  EXPECT_EQ(t.trials, 0);
  EXPECT_EQ(t.mean_ms, 2.5);
  EXPECT_EQ(t.min_ms, 2.5);
  EXPECT_EQ(t.max_ms, 2.5);
  EXPECT_EQ(t.p10_ms, 2.5);
  EXPECT_EQ(t.p90_ms, 2.5);
  EXPECT_EQ(t.std_ms, 0.0);
}

TEST(Result, AMalformedIntervalIsIgnored) {
  const json j = {{"speedup_eager_interval", {1.0}}, {"speedup_compile_interval", {1.0, "x"}}};
  EXPECT_FALSE(interval_from_json(j, "speedup_eager_interval"));
  EXPECT_FALSE(interval_from_json(j, "speedup_compile_interval"));
  EXPECT_FALSE(interval_from_json(j, "absent"));
  const TimingCheck t = timing_check_from_json({{"opened", 4}});
  EXPECT_EQ(t.opened, 4);
  EXPECT_EQ(t.calls_per_window, 1);  // one call a window unless told otherwise
  EXPECT_FALSE(t.gpu_busy_share);    // CPU timings and older lines have none
  EXPECT_FALSE(to_json(t).contains("gpu_busy_share"));
  EXPECT_FALSE(t.watched_ms);  // CPU timings and older lines have none
  EXPECT_FALSE(to_json(t).contains("watched_allowed_ms"));
  EXPECT_FALSE(t.library_ms_per_call);  // GPU timings, too few samples and older lines have none
  EXPECT_FALSE(to_json(t).contains("library_share"));
  EXPECT_FALSE(t.compiled_samples);
  EXPECT_FALSE(t.gpu_library_samples);  // CPU timings and older lines have none
  EXPECT_FALSE(to_json(t).contains("host_samples"));
  EXPECT_FALSE(t.plain_median_ms);  // older lines and the KernelBench protocol (no biased draws) have none
  EXPECT_FALSE(to_json(t).contains("biased_median_ms"));
}

TEST(Result, KernelTimesNeedNameCallsAndTime) {
  const auto k = kernel_times_from_json(json::parse(R"([{"name": "a", "calls": 1, "total_us": 2.5}])"));
  ASSERT_EQ(k.size(), 1u);
  EXPECT_FALSE(k[0].custom);
  EXPECT_THROW(kernel_times_from_json(json::parse(R"([{"name": "a", "calls": 1}])")), json::exception);
}
}  // namespace result_test
