// The evaluation protocol's settings: named protocols, what the worker is sent, what keys the
// result cache, and the environment's defaults.
#include "eval/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace config_test {
using namespace vinci::eval;

// Sets an environment variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(EvalConfig, NamedProtocols) {
  const Protocol vinci = Protocol::named("vinci");
  EXPECT_EQ(vinci.name, "vinci");
  EXPECT_FALSE(vinci.allow_tf32_cudnn);
  EXPECT_TRUE(vinci.ood_trials);
  EXPECT_TRUE(vinci.precision_gate);
  // KernelBench's judgement: PyTorch's cuDNN default, no out-of-distribution inputs, no fp64 gate.
  const Protocol kb = Protocol::named("kernelbench");
  EXPECT_EQ(kb.name, "kernelbench");
  EXPECT_FALSE(kb.allow_tf32_matmul);
  EXPECT_TRUE(kb.allow_tf32_cudnn);
  EXPECT_FALSE(kb.ood_trials);
  EXPECT_FALSE(kb.precision_gate);
  try {
    Protocol::named("KernelBench");
    FAIL() << "protocol names are case-sensitive";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'KernelBench'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vinci or kernelbench"), std::string::npos) << e.what();
  }
}

TEST(EvalConfig, WorkerJsonCarriesToleranceAsAtolRtolPairs) {
  EvalConfig c;
  c.tolerances = {{"float32", {1e-3, 2e-3}}};
  c.run_timeout = std::chrono::seconds(7);
  const auto j = c.worker_json();
  EXPECT_EQ(j["tolerances"]["float32"], nlohmann::json::array({1e-3, 2e-3}));
  EXPECT_EQ(j["run_timeout_s"], 7);
  EXPECT_EQ(j["protocol"], "vinci");
  EXPECT_EQ(j["numerics"]["allow_tf32_cudnn"], false);
  EXPECT_EQ(j["timing"]["trials"], 100);
  EXPECT_EQ(j["seed"], 42);
}

TEST(EvalConfig, LimitsDoNotChangeTheFingerprint) {
  // A result measured with a longer timeout or more memory is the same result.
  const EvalConfig base;
  EvalConfig limits = base;
  limits.run_timeout = std::chrono::seconds(1);
  limits.compile_timeout = std::chrono::seconds(1);
  limits.file_size_limit = 1;
  limits.cpu_memory_limit = 1;
  limits.scratch_bytes = 1;
  limits.cpu_seconds = 1;
  limits.build_jobs = 64;
  limits.use_cache = false;
  EXPECT_EQ(limits.fingerprint(), base.fingerprint());
}

TEST(EvalConfig, WhatIsMeasuredChangesTheFingerprint) {
  const EvalConfig base;
  const auto differs = [&](auto edit) {
    EvalConfig c = base;
    edit(c);
    return c.fingerprint() != base.fingerprint();
  };
  EXPECT_TRUE(differs([](EvalConfig& c) { c.seed = 43; }));
  EXPECT_TRUE(differs([](EvalConfig& c) { c.scale = 0.5; }));
  EXPECT_TRUE(differs([](EvalConfig& c) { c.protocol = Protocol::named("kernelbench"); }));
  EXPECT_TRUE(differs([](EvalConfig& c) { c.tolerances["float32"].atol = 1e-3; }));
  EXPECT_TRUE(differs([](EvalConfig& c) { c.timing.trials = 50; }));
  EXPECT_TRUE(differs([](EvalConfig& c) { c.torch_ops = "allow"; }));
  EXPECT_EQ(base.fingerprint().size(), 32u);
}

TEST(EvalConfig, ResolveTakesTheCacheFromTheEnvironmentInOrder) {
  const ScopedEnv python("VINCI_PYTHON", "/opt/py/bin/python3");
  const ScopedEnv worker("VINCI_WORKER_PATH", "/opt/worker");
  const ScopedEnv sandbox("VINCI_SANDBOX_BIN", "/opt/sandbox");
  {
    const ScopedEnv cache("VINCI_CACHE", "/var/vc");
    const ScopedEnv xdg("XDG_CACHE_HOME", "/var/xdg");
    EvalConfig c;
    c.resolve();
    EXPECT_EQ(c.cache_dir, "/var/vc");
    EXPECT_EQ(c.python, "/opt/py/bin/python3");
    EXPECT_EQ(c.worker_path, "/opt/worker");
    EXPECT_EQ(c.sandbox_path, "/opt/sandbox");
    EXPECT_GE(c.build_jobs, 1);
    EXPECT_GT(c.cpu_memory_limit, 0u);
  }
  {
    const ScopedEnv cache("VINCI_CACHE", nullptr);
    const ScopedEnv xdg("XDG_CACHE_HOME", "/var/xdg");
    EvalConfig c;
    c.resolve();
    EXPECT_EQ(c.cache_dir, "/var/xdg/vinci");
  }
  {
    const ScopedEnv cache("VINCI_CACHE", nullptr);
    const ScopedEnv xdg("XDG_CACHE_HOME", "");  // empty counts as unset
    const ScopedEnv home("HOME", "/home/someone");
    EvalConfig c;
    c.resolve();
    EXPECT_EQ(c.cache_dir, "/home/someone/.cache/vinci");
  }
}

TEST(EvalConfig, ResolveKeepsWhatWasSetAndMakesPathsAbsolute) {
  const ScopedEnv cache("VINCI_CACHE", "/var/vc");
  EvalConfig c;
  c.cache_dir = "relative/cache";
  c.build_jobs = 3;
  c.cpu_memory_limit = 12345;
  c.resolve();
  EXPECT_TRUE(c.cache_dir.is_absolute());
  EXPECT_EQ(c.cache_dir, std::filesystem::absolute("relative/cache"));
  EXPECT_EQ(c.build_jobs, 3);
  EXPECT_EQ(c.cpu_memory_limit, 12345u);
}
}  // namespace config_test
