// What the policy reads about its last kernel: build logs with and without errors, several error
// sites, caps, every verdict's wording, and the profile summary.
#include "agents/feedback.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace feedback_test {
using namespace vinci::agents;
using vinci::eval::Result;
using vinci::eval::Verdict;

std::string numbered_lines(const std::string& prefix, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("{} {}\n", prefix, i);
  return out;
}

TEST(Feedback, ALogWithoutErrorsKeepsItsTail) {
  const std::string log = numbered_lines("note", 100);  // "note 0\n" .. "note 99\n": 790 bytes
  const std::string trimmed = trim_build_log(log, 16);
  EXPECT_EQ(trimmed, fmt::format("[... {} characters of log cut]\nnote 98\nnote 99\n", log.size() - 16));
}

TEST(Feedback, SeparateErrorSitesAreJoinedByAnEllipsis) {
  const std::string log = numbered_lines("ok", 50) + "a.cu(1): error: first\n  src\n  ^\n" + numbered_lines("ok", 50) +
                          "Traceback...\nRuntimeError: second\n" + numbered_lines("fine", 50);
  // Each error keeps its next two lines: the source line and caret under gcc's message.
  EXPECT_EQ(trim_build_log(log, 400), "a.cu(1): error: first\n  src\n  ^\n...\nRuntimeError: second\nfine 0\nfine 1\n");
}

TEST(Feedback, ErrorLinesPastTheCapAreCounted) {
  std::string log = numbered_lines("filler line", 40);
  for (int i = 0; i < 10; ++i) log += fmt::format("x.cu({}): error: e{}\n", i, i);
  const std::string trimmed = trim_build_log(log, 60);
  // Each error line is 19 bytes with its newline: three fit in 60, seven are counted.
  EXPECT_EQ(trimmed, "x.cu(0): error: e0\nx.cu(1): error: e1\nx.cu(2): error: e2\n[7 more error lines cut]\n");
}

TEST(Feedback, ErrorWordsAreFoundInAnyCase) {
  const std::string log = numbered_lines("x", 100) + "ImportError: no module\n" + numbered_lines("y", 100) +
                          "ld: UNDEFINED REFERENCE to foo\n";
  const std::string trimmed = trim_build_log(log, 300);
  EXPECT_NE(trimmed.find("ImportError: no module"), std::string::npos) << trimmed;
  EXPECT_NE(trimmed.find("UNDEFINED REFERENCE"), std::string::npos) << trimmed;
  EXPECT_EQ(trimmed.find("x 5\n"), std::string::npos) << trimmed;
}

TEST(Feedback, OutcomeLines) {
  Result r;
  r.verdict = Verdict::compile_error;
  r.reason = "build_failed";
  EXPECT_EQ(outcome_line(r), "compile_error/build_failed");
  r.verdict = Verdict::timeout;
  r.reason = "";
  EXPECT_EQ(outcome_line(r), "timeout");
  r.verdict = Verdict::correct;
  r.speedup_eager = 2.314;
  r.speedup_compile = 0.5;
  EXPECT_EQ(outcome_line(r), "correct, 2.31x eager, 0.50x torch.compile");
  EXPECT_DOUBLE_EQ(attempt_speedup(r), 2.314);
  r.speedup_eager.reset();
  EXPECT_EQ(attempt_speedup(r), 0.0);  // correct but untimed ranks as nothing gained
}

TEST(Feedback, EveryVerdictIsExplained) {
  Result r;
  r.message = "details here";
  r.verdict = Verdict::compile_error;
  EXPECT_EQ(describe_result(r), "The file did not build or import.\ndetails here\n");
  r.verdict = Verdict::rejected;
  r.reason = "torch_op";
  EXPECT_EQ(describe_result(r), "Rejected (torch_op): this is not allowed.\ndetails here\n");
  r.verdict = Verdict::runtime_error;
  EXPECT_EQ(describe_result(r), "It failed while running.\ndetails here\n");
  r.verdict = Verdict::timeout;
  EXPECT_EQ(describe_result(r), "It ran past the time limit.\ndetails here\n");
  r.verdict = Verdict::invalid_task;
  EXPECT_EQ(describe_result(r), "The task itself could not be evaluated; this is not your fault.\ndetails here\n");
}

TEST(Feedback, ACorrectResultShowsTimesButNotItsMessage) {
  Result r;
  r.verdict = Verdict::correct;
  r.trials = r.trials_passed = 5;
  r.timing = vinci::eval::TimingStats{100, 0.5};
  r.eager = vinci::eval::TimingStats{100, 1.25};
  r.speedup_eager = 2.5;
  r.message = "worker chatter";
  r.warnings = {"slow build"};
  r.flags = {"timing_charged"};
  EXPECT_EQ(describe_result(r),
            "Correct on 5/5 trials. Your kernel: 0.5000 ms (median of 100 runs). PyTorch eager: 1.2500 ms. "
            "Speedup over eager: 2.50x.\nWarning: slow build\nFlag: timing_charged\n");
}

TEST(Feedback, ALaunchBoundTimingSaysWhereTheTimeWent) {
  Result r;
  r.verdict = Verdict::correct;
  r.trials = r.trials_passed = 5;
  r.flags = {"launch_bound"};
  EXPECT_EQ(describe_result(r),
            "Correct on 5/5 trials.\nFlag: launch_bound (your kernels kept the GPU busy for under half of the measured "
            "time; the rest went to launching them from the host, so fewer launches and less Python in forward gain "
            "more than faster kernels)\n");
}

TEST(Feedback, TheMessageIsTrimmedToTheGivenSize) {
  Result r;
  r.verdict = Verdict::runtime_error;
  r.message = numbered_lines("trace", 100) + "ValueError: bad shape\n";
  EXPECT_EQ(describe_result(r, 100), "It failed while running.\nValueError: bad shape\n\n");
}
TEST(Feedback, BuildLogKeepsErrorsWithContext) {
  std::string log;
  for (int i = 0; i < 200; ++i) log += fmt::format("note: building object {}\n", i);
  log += "kernel.cu(12): error: identifier \"blockIdx\" is undefined\n  int i = blockIdx.x;\n          ^\n";
  for (int i = 0; i < 200; ++i) log += fmt::format("note: more {}\n", i);
  const std::string trimmed = trim_build_log(log, 500);
  EXPECT_EQ(trimmed,
            "kernel.cu(12): error: identifier \"blockIdx\" is undefined\n  int i = blockIdx.x;\n          ^\n");
  EXPECT_EQ(trim_build_log("short log", 500), "short log");
}

TEST(Feedback, DescribesSpeedAndMismatch) {
  Result ok;
  ok.verdict = Verdict::correct;
  ok.trials = ok.trials_passed = 5;
  ok.speedup_eager = 2.5;
  ok.coverage = 0.9;
  ok.custom_launches = 2;
  EXPECT_EQ(outcome_line(ok), "correct, 2.50x eager (coverage 90%)");
  EXPECT_NE(describe_result(ok).find("Speedup over eager: 2.50x."), std::string::npos);
  EXPECT_NE(describe_result(ok).find("90% of the forward time (2 launches per call)"), std::string::npos);
  Result bad;
  bad.verdict = Verdict::incorrect;
  bad.trials = 5;
  bad.trials_passed = 1;
  bad.max_abs_diff = 0.25;
  EXPECT_EQ(outcome_line(bad), "incorrect");
  EXPECT_NE(describe_result(bad).find("1/5 trials passed. Max abs difference 0.25"), std::string::npos);
  EXPECT_EQ(attempt_speedup(bad), 0.0);
}

TEST(Feedback, ProfileSummaryShowsWhereTheGpuTimeWent) {
  Result ok;
  ok.verdict = Verdict::correct;
  ok.coverage = 0.75;
  ok.custom_launches = 2;
  // As the worker sends it, and as it survives the result file.
  ok.profile = vinci::eval::kernel_times_from_json(nlohmann::json::parse(
      R"([{"name":"row_softmax_kernel","calls":2,"total_us":30.0,"custom":true},
          {"name":"at::native::copy_kernel","calls":1,"total_us":10.0,"custom":false}])"));
  ok.profile = vinci::eval::result_from_json(vinci::eval::to_json(ok)).profile;
  EXPECT_EQ(profile_summary(ok.profile),
            "Profile of one forward call (GPU time by kernel, longest first):\n"
            "- 30.0 us (75%), 2 launches: row_softmax_kernel (yours)\n"
            "- 10.0 us (25%), 1 launch: at::native::copy_kernel\n");
  EXPECT_NE(describe_result(ok).find("- 30.0 us (75%), 2 launches"), std::string::npos);
  EXPECT_EQ(profile_summary({}), "");
}

}  // namespace feedback_test
