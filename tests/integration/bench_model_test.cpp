// `vinci bench-model` end to end on this machine's CPU, against a scripted OpenAI-compatible server:
// two samples of one task (tests/fixtures/agents/), the first answer a correct one-launch kernel,
// the second a kernel that computes the wrong function. The evaluator is the real one, so the
// verdicts below were measured: pass@1 = 1/2, pass@2 = 1, fast_0 = 1.
//
// The kernels reuse the extensions of tasks/solutions/cpu/level1/13_ReLU.py and 10_GELU.py, which the
// pipeline tests build into the same extension cache: no extra compile.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/episode.h"
#include "core/files.h"
#include "core/process.h"
#include "eval/metrics.h"
#include "support/agent_script.h"
#include "support/cpu_eval_config.h"
#include "support/jsonl.h"
#include "support/scripted_server.h"
#include "support/test_cache.h"
#include "support/vinci_cli.h"

namespace bench_model_test {

using vinci::test::read_jsonl;
using vinci::test::run_vinci;

namespace fs = std::filesystem;
using nlohmann::json;
using vinci::test::RecordedRequest;
using vinci::test::ScriptedReply;
using vinci::test::ScriptedServer;

const fs::path kRoot = VINCI_SOURCE_ROOT;

using vinci::test::kFastKernel;
using vinci::test::test_cache;
const std::string kWrongKernel =
    vinci::test::kernel_with_forward("        return _ext.gelu_cpu(x.contiguous())\n", "level1/10_GELU");

std::string completion(const std::string& strategy, const std::string& code) {
  const std::string text = fmt::format("Strategy: {}\n```python\n{}```\n", strategy, code);
  return json{
      {"id", "c"},
      {"object", "chat.completion"},
      {"model", "tiny"},
      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}}}
      .dump();
}

TEST(BenchModel, PassAtKAndFastPEndToEndOnCpu) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vinci-bench-model-test-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  ScriptedServer server;
  int replies = 0;  // the server calls the responder under its lock
  server.respond_with([&](const RecordedRequest&) -> ScriptedReply {
    return {200, ++replies == 1 ? completion("one launch", kFastKernel) : completion("gelu by mistake", kWrongKernel)};
  });

  const fs::path out = dir / "out";
  const std::vector<std::string> args = {"--tasks",
                                         (kRoot / "tests/fixtures/agents").string(),
                                         "--llm",
                                         server.base_url(),
                                         "--model-name",
                                         "tiny",
                                         "--samples",
                                         "2",
                                         "--seed",
                                         "5",
                                         "--device",
                                         "cpu",
                                         "--no-compile-baseline",
                                         "--torch-ops",
                                         vinci::test::kAgentTestsTorchOps,
                                         "--trials",
                                         "20",
                                         "--time-budget",
                                         "3",
                                         "--run-timeout",
                                         "300",
                                         "--cache-dir",
                                         test_cache().string(),
                                         "--out",
                                         out.string()};
  const auto run = run_vinci("bench-model", args, dir / "stderr.log", std::chrono::minutes(20));
  const std::string log = vinci::core::try_read_file(dir / "stderr.log").value_or("");
  ASSERT_TRUE(run.status.exited && run.status.code == 0) << run.status.describe() << "\n" << run.out << "\n" << log;
  EXPECT_NE(run.out.find("pass@1 50.0%  pass@2 100.0%  (1 of 1 tasks solved)"), std::string::npos) << run.out;
  EXPECT_EQ(server.requests().size(), 2u);

  const json summary = json::parse(vinci::core::read_file(out / "summary.json"));
  EXPECT_DOUBLE_EQ(summary["pass_at_k"]["1"].get<double>(), 0.5) << summary.dump(2);
  EXPECT_DOUBLE_EQ(summary["pass_at_k"]["2"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(summary["fast_p"]["eager"]["overall"]["fast_0"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(summary["fast_p"]["eager"]["levels"]["1"]["fast_0"].get<double>(), 1.0);
  EXPECT_EQ(summary["counts"]["evaluated"], 2);
  EXPECT_EQ(summary["counts"]["correct_attempts"], 1);

  // results.jsonl is what `vinci report` and read_results_jsonl read.
  const auto results = vinci::eval::read_results_jsonl(out / "results.jsonl");
  ASSERT_EQ(results.size(), 2u);
  int correct = 0;
  for (const auto& r : results) {
    EXPECT_EQ(r.task, "level1/1_RowwiseRelu");
    correct += r.correct();
    if (!r.correct()) {
      EXPECT_EQ(r.verdict, vinci::eval::Verdict::incorrect) << r.message;
    }
  }
  EXPECT_EQ(correct, 1);

  const auto attempts = read_jsonl(out / "attempts.jsonl");
  ASSERT_EQ(attempts.size(), 2u);
  std::string fast_file;
  for (const auto& a : attempts) {
    EXPECT_EQ(a["turn"], 0);
    ASSERT_TRUE(a["file"].is_string()) << a.dump();
    EXPECT_TRUE(fs::exists(out / a["file"].get<std::string>())) << a.dump();
    if (a["class"] == "correct") fast_file = a["file"];
  }
  EXPECT_EQ(attempts[0]["sample"], 0);
  EXPECT_EQ(attempts[1]["sample"], 1);
  ASSERT_FALSE(fast_file.empty());
  EXPECT_EQ(vinci::core::read_file(out / fast_file), kFastKernel);
  EXPECT_EQ(fs::path(fast_file).parent_path(), "candidates/level1/1_RowwiseRelu");
  const auto episodes = vinci::agents::load_episodes(out / "episodes.jsonl");
  ASSERT_EQ(episodes.size(), 1u);
  EXPECT_EQ(episodes[0].calls.size(), 2u);

  // The same --out again is refused; resumed, every call is answered from the journal.
  const auto again = run_vinci("bench-model", args, dir / "stderr2.log", std::chrono::minutes(20));
  EXPECT_EQ(again.status.code, 1);
  EXPECT_NE(vinci::core::read_file(dir / "stderr2.log").find("--resume"), std::string::npos);
  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  const auto resumed = run_vinci("bench-model", resume, dir / "stderr3.log", std::chrono::minutes(20));
  ASSERT_EQ(resumed.status.code, 0) << vinci::core::read_file(dir / "stderr3.log");
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(read_jsonl(out / "attempts.jsonl"), attempts);
  fs::remove_all(dir);
}

}  // namespace bench_model_test
