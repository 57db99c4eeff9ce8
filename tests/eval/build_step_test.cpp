// The build step's protocol, against a stand-in build server (a few lines of Python speaking the
// same JSON lines): what a request carries, how reports become outcomes, and what a server that
// dies or talks nonsense turns into. Real builds run in tests/integration/pipeline_test.cpp.
#include "eval/build_step.h"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace build_step_test {
using namespace vinci::eval;
namespace fs = std::filesystem;

// The candidate file's first line says how the build goes. A successful build echoes what the
// server saw in its static report's lists, which the typed report carries through: the request as
// JSON text, the server's argv, its MAX_JOBS.
constexpr const char* kFakeServer = R"PY(
import json, os, sys
here = os.path.dirname(__file__)
if os.path.exists(os.path.join(here, "no_start")):
    sys.exit(1)
print(json.dumps({"hello": True, "argv": sys.argv[1:]}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    how = open(req["candidate"]).readline().strip()
    if how == "ok":
        reply = {"report": {"ok": True, "static": {"kernel_names": [json.dumps(req)],
                                                   "extension_functions": sys.argv[1:],
                                                   "findings": [os.environ.get("MAX_JOBS")]}}}
    elif how == "rejected":
        reply = {"report": {"ok": False, "class": "rejected", "reason": "torch_op", "message": "calls torch.matmul"}}
    elif how == "odd_class":
        reply = {"report": {"ok": False, "class": "exploded", "reason": "r"}}
    elif how == "no_report":
        reply = {"something": "else"}
    elif how == "garbage":
        print("not json", flush=True)
        continue
    else:
        sys.exit(3)
    print(json.dumps(reply), flush=True)
)PY";

struct Builder {
  vinci::test::TempDir dir{"build-step"};
  EvalConfig config;
  Task task;
  std::unique_ptr<BuildStep> step;
  explicit Builder(bool start = true) {
    fs::create_directories(dir.path() / "vinci_worker");
    std::ofstream(dir.path() / "vinci_worker" / "__init__.py") << "";
    std::ofstream(dir.path() / "vinci_worker" / "__main__.py") << kFakeServer;
    if (!start) std::ofstream(dir.path() / "vinci_worker" / "no_start") << "";
    config.python = "python3";
    config.worker_path = dir.path();
    config.cache_dir = dir.path() / "cache";
    config.sandbox_path = "/nonexistent/vinci-sandbox";
    config.device = "cpu";
    config.cpu_memory_limit = 123456789;
    config.build_jobs = 4;
    config.torch_ops = "warn";
    task.file = dir.path() / "1_Relu.py";
    step = std::make_unique<BuildStep>(config, 0);
  }
  BuildOutcome build(const std::string& how) {
    const fs::path candidate = dir.path() / (how + ".py");
    std::ofstream(candidate) << how << "\n";
    return step->run(candidate, task, dir.path() / "build.log");
  }
};

TEST(BuildStep, ASuccessfulBuildCarriesTheStaticReport) {
  Builder b;
  const BuildOutcome out = b.build("ok");
  ASSERT_TRUE(out.ok) << out.message;
  ASSERT_EQ(out.static_report.kernel_names.size(), 1u);
  const auto request = nlohmann::json::parse(out.static_report.kernel_names[0]);
  EXPECT_EQ(request.at("candidate"), (b.dir.path() / "ok.py").string());
  EXPECT_EQ(request.at("task"), (b.dir.path() / "1_Relu.py").string());
  EXPECT_EQ(request.at("address_space"), 123456789);  // the CPU memory limit applies to CPU builds
  EXPECT_EQ(request.at("policy").at("torch_ops"), "warn");
  EXPECT_EQ(request.at("static_only"), false);
  const std::vector<std::string>& argv = out.static_report.extension_functions;
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(argv[0], "build-server");
  EXPECT_EQ(argv[2], "cpu");
  EXPECT_EQ(argv[4], (b.dir.path() / "cache").string());
  // Builds run side by side: each gets two jobs, not every core.
  EXPECT_EQ(out.static_report.findings, std::vector<std::string>{"2"});
  EXPECT_GE(out.seconds, 0.0);
}

// The CPU pool's steps ask the server for the static checks only.
TEST(BuildStep, AStaticOnlyStepSaysSoInItsRequests) {
  Builder b;
  b.step = std::make_unique<BuildStep>(b.config, 1, /*static_only=*/true);
  const BuildOutcome out = b.build("ok");
  ASSERT_TRUE(out.ok) << out.message;
  ASSERT_EQ(out.static_report.kernel_names.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(out.static_report.kernel_names[0]).at("static_only"), true);
}

TEST(BuildStep, AFailedBuildKeepsItsClassReasonAndMessage) {
  Builder b;
  const BuildOutcome out = b.build("rejected");
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.verdict, Verdict::rejected);
  EXPECT_EQ(out.reason, "torch_op");
  EXPECT_EQ(out.message, "calls torch.matmul");
  // An unknown class is the server's fault, not the candidate's: its reply is out of protocol.
  const BuildOutcome odd = b.build("odd_class");
  EXPECT_EQ(odd.verdict, Verdict::runtime_error);
  EXPECT_NE(odd.message.find("'report.class': unknown result class 'exploded'"), std::string::npos) << odd.message;
}

TEST(BuildStep, AServerThatDiesOrTalksNonsenseIsABuildCrash) {
  Builder b;
  for (const char* how : {"die", "garbage", "no_report"}) {
    const BuildOutcome out = b.build(how);
    EXPECT_FALSE(out.ok) << how;
    EXPECT_EQ(out.verdict, Verdict::runtime_error) << how;
    EXPECT_EQ(out.reason, "build_crashed") << how;
    EXPECT_EQ(out.message.rfind("the build server ", 0), 0u) << out.message;
    // The next build gets a fresh server.
    EXPECT_TRUE(b.build("ok").ok) << "after " << how;
  }
  EXPECT_NE(b.build("garbage").message.find("answered out of protocol (not JSON): not json"), std::string::npos);
  EXPECT_NE(b.build("no_report").message.find("answered out of protocol ('report': missing)"), std::string::npos);
}

TEST(BuildStep, AServerThatDoesNotStartIsReported) {
  Builder b(/*start=*/false);
  const BuildOutcome out = b.build("ok");
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.verdict, Verdict::runtime_error);
  EXPECT_EQ(out.reason, "build_not_started");
  EXPECT_NE(out.message.find("the build server did not start"), std::string::npos) << out.message;
}
}  // namespace build_step_test
