#include "queue/job_settings.h"

#include <gtest/gtest.h>

namespace vinci::queue::job_settings_test {

// Every measured setting away from its default, so one that does not travel changes the fingerprint.
eval::EvalConfig unusual_config() {
  eval::EvalConfig c;
  c.protocol = eval::Protocol::named("kernelbench");
  c.protocol.allow_tf32_matmul = true;
  c.correctness_trials = 7;
  c.seed = 1234;
  c.tolerances = {{"float32", {2e-4, 3e-4}}, {"float16", {0.02, 0.03}}};
  c.torch_ops = "allow";
  c.allow_precision_drop = true;
  c.min_coverage = 0.6;
  c.roofline_margin = 0.8;
  c.compile_baseline = false;
  c.scale = 0.05;
  c.timing = {.trials = 17,
              .min_trials = 3,
              .warmup = 2,
              .warmup_ms = 5,
              .budget_s = 9,
              .open_calls = 4,
              .window_ms = 3,
              .max_calls_per_window = 8,
              .window_bytes = 1 << 20};
  return c;
}

TEST(JobSettings, AWorkerJudgesUnderTheSubmittersMeasuredSettingsAndItsOwnLimits) {
  eval::EvalConfig submitter = unusual_config();
  submitter.run_timeout = std::chrono::seconds(7);
  eval::EvalConfig host;
  host.run_timeout = std::chrono::seconds(600);
  host.compile_memory_bytes = 1ull << 30;
  ASSERT_NE(host.fingerprint(), submitter.fingerprint());
  const eval::EvalConfig judged = judged_config(host, job_settings(submitter));
  EXPECT_EQ(judged.fingerprint(), submitter.fingerprint());
  EXPECT_EQ(settings_fingerprint(judged, job_settings(submitter)), submitter.fingerprint());
  EXPECT_EQ(judged.run_timeout, std::chrono::seconds(600));
  EXPECT_EQ(judged.compile_memory_bytes, 1ull << 30);
  EXPECT_EQ(judged.timing.trials, 17);
  EXPECT_EQ(judged.protocol.name, "kernelbench");
}

TEST(JobSettings, AFreshMeasurementHasAFingerprintOfItsOwn) {
  const eval::EvalConfig c = unusual_config();
  const auto a = job_settings(c, "nonce-a"), b = job_settings(c, "nonce-b");
  EXPECT_TRUE(is_fresh(a));
  EXPECT_FALSE(is_fresh(job_settings(c)));
  const eval::EvalConfig judged = judged_config({}, a);
  EXPECT_NE(settings_fingerprint(judged, a), c.fingerprint());
  EXPECT_NE(settings_fingerprint(judged, a), settings_fingerprint(judged, b));
  EXPECT_EQ(settings_fingerprint(judged, a), settings_fingerprint(judged_config({}, a), a));
}

TEST(JobSettings, AMissingSettingIsNamed) {
  nlohmann::json s = job_settings(unusual_config());
  s["timing"].erase("window_ms");
  try {
    judged_config({}, s);
    ADD_FAILURE() << "settings without timing.window_ms were read";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("timing.window_ms"), std::string::npos) << e.what();
  }
}

}  // namespace vinci::queue::job_settings_test
