// The judge's wire on the C++ side, pinned to the fixtures python/vinci_worker/protocol.py reads too
// (tests/fixtures/judge_protocol/, tests/eval/judge_protocol_test.py): each fixture read into its
// record and written back is the same JSON, a few fields checked by hand; replies out of shape
// become an error naming the field, never an exception.
#include "eval/judge_protocol.h"

#include <gtest/gtest.h>

#include "core/files.h"

namespace judge_protocol_test {
using namespace vinci::eval;
using nlohmann::json;
namespace fs = std::filesystem;

json fixture(const std::string& name) {
  return json::parse(
      vinci::core::read_file(fs::path(VINCI_SOURCE_ROOT) / "tests" / "fixtures" / "judge_protocol" / (name + ".json")));
}

// Reads the fixture with read and writes it back; the record, for checks by hand.
template <typename T>
T round_trip(const std::string& name, Parsed<T> (*read)(const json&)) {
  const json wire = fixture(name);
  const Parsed<T> parsed = read(wire);
  EXPECT_TRUE(parsed.value) << name << ": " << parsed.error;
  if (!parsed.value) return T{};
  EXPECT_EQ(to_json(*parsed.value), wire) << name;
  return *parsed.value;
}

TEST(JudgeProtocol, RequestsRoundTripThroughTheFixtures) {
  round_trip("hello_request", hello_request_from_json);
  const BuildRequest build = round_trip("build_request", build_request_from_json);
  EXPECT_EQ(build.torch_ops, "forbid");
  EXPECT_EQ(build.import_timeout, 120);
  const BaselineRequest baseline = round_trip("baseline_request", baseline_request_from_json);
  EXPECT_EQ(baseline.config.at("seed"), 42);  // carried whole, not read
  const EvaluateRequest evaluate = round_trip("evaluate_request", evaluate_request_from_json);
  EXPECT_EQ(evaluate.static_report.kernel_names, std::vector<std::string>{"relu_kernel"});
  EXPECT_EQ(evaluate.calls_per_window, 8);
  EXPECT_EQ(evaluate.eager_times.size(), 5u);
}

TEST(JudgeProtocol, RepliesRoundTripThroughTheFixtures) {
  const HelloReply hello = round_trip("hello_reply", hello_reply_from_json);
  EXPECT_EQ(hello.device_name, "NVIDIA H200");
  EXPECT_EQ(hello.sandbox, "bwrap+seccomp");
  EXPECT_EQ(hello.sm_count, 132);

  const BuildReply built = round_trip("build_reply", build_reply_from_json);
  EXPECT_TRUE(built.ok);
  EXPECT_EQ(built.static_report.findings.size(), 1u);
  const BuildReply refused = round_trip("build_failure_reply", build_reply_from_json);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.verdict, Verdict::rejected);
  EXPECT_EQ(refused.reason, "torch_op");

  const BaselineReply baseline = round_trip("baseline_reply", baseline_reply_from_json);
  EXPECT_DOUBLE_EQ(baseline.eager.median_ms, 0.0412);
  ASSERT_TRUE(baseline.compile);
  EXPECT_DOUBLE_EQ(baseline.compile->median_ms, 0.0398);
  EXPECT_EQ(baseline.calls_per_window, 8);
  EXPECT_EQ(baseline.reference_kernels.size(), 1u);

  const EvaluateReply measured = round_trip("evaluate_reply", evaluate_reply_from_json);
  EXPECT_EQ(measured.trials_passed, 9);
  ASSERT_TRUE(measured.external);
  EXPECT_EQ(measured.external->calls_per_window, 8);
  EXPECT_EQ(measured.external->planned_windows, 100);
  EXPECT_EQ(measured.external->timed_inputs, "signed");
  EXPECT_EQ(measured.external->gpu_busy_share, 0.83);
  EXPECT_EQ(measured.external->watched_ms, 0.031);
  EXPECT_EQ(measured.external->watched_allowed_ms, 0.54);
  EXPECT_EQ(measured.external->profiled_ms, 9.5);
  EXPECT_EQ(measured.external->biased_median_ms, 0.0209);
  EXPECT_EQ(measured.external->plain_median_ms, 0.0215);
  ASSERT_EQ(measured.profile.size(), 1u);
  EXPECT_TRUE(measured.profile[0].custom);
  ASSERT_TRUE(measured.speedup_eager_interval);
  EXPECT_EQ((*measured.speedup_eager_interval)[1], 1.95);
  EXPECT_EQ(measured.phase_seconds.at("time"), 6.05);
  ASSERT_TRUE(measured.eager_paired && measured.speedup_eager && measured.speedup_compile);
  EXPECT_EQ(measured.eager_paired->trials, 50);
  EXPECT_EQ(*measured.speedup_eager, 1.916);

  const JudgeFailure failure = round_trip("evaluate_failure_reply", failure_from_json);
  EXPECT_EQ(failure.verdict, Verdict::incorrect);
  EXPECT_EQ(failure.trials_passed, 2);
  EXPECT_EQ(failure.max_abs_diff, 0.734);
  EXPECT_FALSE(failure.mean_abs_diff);
  EXPECT_FALSE(failure.fatal);
}

// Null and absent are the same on the wire: Python writes None as either.
TEST(JudgeProtocol, NullIsAbsent) {
  json wire = fixture("baseline_reply");
  wire["compile"] = nullptr;
  wire["compile_times"] = nullptr;
  const Parsed<BaselineReply> r = baseline_reply_from_json(wire);
  ASSERT_TRUE(r.value) << r.error;
  EXPECT_FALSE(r.value->compile);
  EXPECT_TRUE(r.value->compile_times.empty());
}

template <typename T>
std::string error_of(const json& wire, Parsed<T> (*read)(const json&)) {
  const Parsed<T> r = read(wire);
  EXPECT_FALSE(r.value) << wire.dump();
  return r.error;
}

TEST(JudgeProtocol, AMalformedReplyNamesItsField) {
  json evaluate = fixture("evaluate_reply");
  evaluate["timing"].erase("median_ms");
  EXPECT_EQ(error_of(evaluate, evaluate_reply_from_json).rfind("'timing': ", 0), 0u);
  evaluate = fixture("evaluate_reply");
  evaluate["trials_passed"] = "9";
  EXPECT_EQ(error_of(evaluate, evaluate_reply_from_json), "'trials_passed': not a number");
  evaluate = fixture("evaluate_reply");
  evaluate["speedup_eager_interval"] = {1.0};
  EXPECT_EQ(error_of(evaluate, evaluate_reply_from_json), "'speedup_eager_interval': not a [low, high] pair");
  evaluate = fixture("evaluate_reply");
  evaluate["flags"] = {"ok", 3};
  EXPECT_EQ(error_of(evaluate, evaluate_reply_from_json), "'flags': not a list of strings");

  json baseline = fixture("baseline_reply");
  baseline.erase("eager_times");
  EXPECT_EQ(error_of(baseline, baseline_reply_from_json), "'eager_times': missing");

  json hello = fixture("hello_reply");
  hello["sandbox"] = 7;
  EXPECT_EQ(error_of(hello, hello_reply_from_json), "'sandbox': not a string");

  json failure = fixture("evaluate_failure_reply");
  failure["class"] = "exploded";
  EXPECT_EQ(error_of(failure, failure_from_json), "'class': unknown result class 'exploded'");
  failure = fixture("evaluate_failure_reply");
  failure["fatal"] = 1;
  EXPECT_EQ(error_of(failure, failure_from_json), "'fatal': not a boolean");

  json build = fixture("build_reply");
  build["report"]["static"]["uses_triton"] = "no";
  EXPECT_EQ(error_of(build, build_reply_from_json), "'report.static.uses_triton': not a boolean");
  EXPECT_EQ(error_of(json{{"something", "else"}}, build_reply_from_json), "'report': missing");
  EXPECT_EQ(error_of(json::array(), hello_reply_from_json), "'(the reply)': not an object");
}

TEST(JudgeProtocol, ALineThatIsNotJsonIsMalformed) {
  EXPECT_EQ(parse_reply_line("not json", build_reply_from_json).error, "not JSON");
  EXPECT_TRUE(parse_reply_line(fixture("build_reply").dump(), build_reply_from_json).value);
}

TEST(JudgeProtocol, ARequestOfAnotherOpIsRefused) {
  EXPECT_EQ(error_of(fixture("baseline_request"), evaluate_request_from_json), "'op': not 'evaluate'");
}

// The baseline cache's key reads the settings' timing and numerics, nothing else.
TEST(JudgeProtocol, BaselineSettingsAreTimingAndNumerics) {
  const json config = fixture("baseline_request").at("config");
  const auto [timing, numerics] = baseline_settings(config);
  EXPECT_EQ(timing, config.at("timing").dump());
  EXPECT_EQ(numerics, config.at("numerics").dump());
}
}  // namespace judge_protocol_test
