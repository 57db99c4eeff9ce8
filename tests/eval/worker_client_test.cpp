// The judge's pipe, against a stand-in vinci_worker package (a few lines of Python speaking the
// same JSON lines): replies classified as ok, failed, timeout or crashed, what a crash report
// carries, and restarts. The real judge is exercised by tests/integration/pipeline_test.cpp.
#include "eval/worker_client.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

#include "support/temp_dir.h"

namespace worker_client_test {
using namespace vinci::eval;
namespace fs = std::filesystem;

constexpr const char* kFakeWorker = R"PY(
import json, os, signal, sys, time
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "hello":
        refuse = os.path.exists(os.path.join(os.path.dirname(__file__), "refuse"))
        reply = {"ok": not refuse, "argv": sys.argv[1:], "cuda": os.environ.get("CUDA_VISIBLE_DEVICES")}
    elif op == "echo":
        reply = {"ok": True, "echo": req.get("value"), "pid": os.getpid()}
    elif op == "fail":
        reply = {"ok": False, "error": "candidate failed"}
    elif op == "fatal":
        reply = {"ok": False, "fatal": True}
    elif op == "hang":
        time.sleep(60)
        continue
    elif op == "die":
        print("Traceback (most recent call last):\nRuntimeError: boom", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    elif op == "garbage":
        print("this is not json", flush=True)
        continue
    print(json.dumps(reply), flush=True)
)PY";

struct Judge {
  vinci::test::TempDir dir{"worker-client"};
  EvalConfig config;
  std::unique_ptr<WorkerClient> client;
  explicit Judge(bool refuse_hello = false) {
    fs::create_directories(dir.path() / "vinci_worker");
    std::ofstream(dir.path() / "vinci_worker" / "__init__.py") << "";
    std::ofstream(dir.path() / "vinci_worker" / "__main__.py") << kFakeWorker;
    if (refuse_hello) std::ofstream(dir.path() / "vinci_worker" / "refuse") << "";
    config.python = "python3";
    config.worker_path = dir.path();
    config.cache_dir = dir.path() / "cache";
    config.sandbox_path = "/nonexistent/vinci-sandbox";
    config.max_pids = 77;
    client = std::make_unique<WorkerClient>(WorkerSpec{"cpu", std::nullopt, dir.path() / "logs" / "judge.log"}, config);
  }
  WorkerReply ask(const std::string& op, int timeout_s = 20) {
    return client->request({{"op", op}, {"value", 7}}, std::chrono::seconds(timeout_s));
  }
};

TEST(WorkerClient, TheJudgeStartsWithItsSettingsAndHidesGpusOnCpu) {
  Judge j;
  const auto& info = j.client->info();
  const std::vector<std::string> argv = info.at("argv");
  const std::vector<std::string> expected = {"judge",
                                             "--device",
                                             "cpu",
                                             "--cache",
                                             (j.dir.path() / "cache").string(),
                                             "--sandbox",
                                             "/nonexistent/vinci-sandbox",
                                             "--max-pids",
                                             "77"};
  EXPECT_EQ(argv, expected);
  EXPECT_EQ(info.at("cuda"), "");
  EXPECT_EQ(j.client->restarts(), 0);
}

TEST(WorkerClient, RepliesAreOkOrFailedByTheirOkField) {
  Judge j;
  const WorkerReply ok = j.ask("echo");
  EXPECT_EQ(ok.kind, WorkerReply::Kind::ok);
  EXPECT_EQ(ok.body.at("echo"), 7);
  const WorkerReply failed = j.ask("fail");
  EXPECT_EQ(failed.kind, WorkerReply::Kind::failed);
  EXPECT_EQ(failed.body.at("error"), "candidate failed");
  // A failed candidate is no reason to restart the judge.
  EXPECT_EQ(j.ask("echo").body.at("pid"), ok.body.at("pid"));
  EXPECT_EQ(j.client->restarts(), 0);
}

TEST(WorkerClient, AFatalReplyRestartsTheJudge) {
  Judge j;
  const auto pid = j.ask("echo").body.at("pid");
  EXPECT_EQ(j.ask("fatal").kind, WorkerReply::Kind::failed);
  EXPECT_EQ(j.client->restarts(), 1);
  EXPECT_NE(j.ask("echo").body.at("pid"), pid);
}

TEST(WorkerClient, AHangIsATimeoutAndTheNextRequestGetsAFreshJudge) {
  Judge j;
  const auto start = std::chrono::steady_clock::now();
  const WorkerReply r = j.ask("hang", 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.kind, WorkerReply::Kind::timeout);
  EXPECT_EQ(r.description, "no reply to 'hang' within 1 s; the worker was killed and restarted");
  EXPECT_EQ(j.client->restarts(), 1);
  EXPECT_EQ(j.ask("echo").kind, WorkerReply::Kind::ok);
}

TEST(WorkerClient, ACrashReportsTheSignalAndTheLogsTail) {
  Judge j;
  const WorkerReply r = j.ask("die");
  EXPECT_EQ(r.kind, WorkerReply::Kind::crashed);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.description.rfind("the worker died during 'die' (", 0), 0u) << r.description;
  EXPECT_NE(r.description.find("last lines of its log:\nTraceback (most recent call last):\nRuntimeError: boom"),
            std::string::npos)
      << r.description;
  EXPECT_EQ(j.client->restarts(), 1);
  EXPECT_EQ(j.ask("echo").kind, WorkerReply::Kind::ok);
}

TEST(WorkerClient, ALineThatIsNotJsonIsACrash) {
  Judge j;
  const WorkerReply r = j.ask("garbage");
  EXPECT_EQ(r.kind, WorkerReply::Kind::crashed);
  EXPECT_EQ(r.description.rfind("the worker wrote a line that is not JSON", 0), 0u) << r.description;
  EXPECT_NE(r.description.find("this is not json"), std::string::npos) << r.description;
  EXPECT_EQ(j.ask("echo").kind, WorkerReply::Kind::ok);
}

TEST(WorkerClient, AJudgeThatDoesNotSayHelloIsAnError) {
  Judge j(/*refuse_hello=*/true);
  try {
    j.client->info();
    FAIL() << "a judge that refused hello was used";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("the cpu judge did not start", 0), 0u) << e.what();
  }
}
}  // namespace worker_client_test
