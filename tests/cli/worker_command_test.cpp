// vinci worker and vinci eval --queue end to end: worker processes and a submitter on a real
// redis-server, the real judge on the CPU, with candidates that build nothing so the test stays quick.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/files.h"
#include "core/process.h"
#include "queue/job_queue.h"
#include "queue/queue_status.h"
#include "support/jsonl.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"
#include "support/vinci_cli.h"

namespace vinci::cli::worker_command_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kPassword = "worker-command-password";
const fs::path kAdversarial = fs::path(VINCI_SOURCE_ROOT) / "tests/adversarial";

// The CPU settings of the CLI tests: small shapes, no torch.compile baseline, few timed calls. Plain
// PyTorch is allowed, so a candidate without a kernel of its own is judged rather than refused.
std::vector<std::string> eval_args(const fs::path& candidates, const fs::path& out) {
  return {"--tasks",
          (kAdversarial / "tasks").string(),
          "--candidates",
          candidates.string(),
          "--device",
          "cpu",
          "--scale",
          "0.05",
          "--no-compile-baseline",
          "--torch-ops",
          "allow",
          "--trials",
          "10",
          "-q",
          "--out",
          out.string()};
}

fs::path candidate_folder(const fs::path& dir, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    fs::create_directories(dir);
    fs::copy_file(kAdversarial / "candidates" / f, dir / f);
  }
  return dir;
}

// A `vinci worker` process; killed with its judges when the test ends.
core::Process start_worker(const std::string& url, const fs::path& dir, const std::string& name,
                           const std::vector<std::string>& extra = {}) {
  core::SpawnOptions o;
  o.argv = {VINCI_BINARY, "worker", "--queue", url,           "--device",
            "cpu",        "--name", name,      "--cache-dir", (dir / ("cache-" + name)).string()};
  o.argv.insert(o.argv.end(), extra.begin(), extra.end());
  o.stderr_path = dir / ("worker-" + name + ".log");
  return core::Process::spawn(o);
}

std::vector<std::string> live_names(queue::RedisConnection& redis) {
  std::vector<std::string> names;
  for (const auto& w : queue::live_workers(redis, {})) names.push_back(w.name);
  return names;
}

// Until n workers have announced themselves (their judges are up by then).
void wait_for_workers(queue::RedisConnection& redis, size_t n, const fs::path& dir) {
  const auto deadline = std::chrono::steady_clock::now() + 180s;
  while (live_names(redis).size() < n) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "workers did not start; see the worker-*.log files in " << dir << "\n"
        << core::try_read_file(dir / "worker-a.log").value_or("");
    std::this_thread::sleep_for(100ms);
  }
}

std::map<std::string, std::string> verdicts(const fs::path& results) {
  std::map<std::string, std::string> out;
  for (const auto& r : test::read_jsonl(results))
    out[fs::path(r.at("candidate").get<std::string>()).filename().string()] =
        r.at("class").get<std::string>() + "/" + r.value("reason", "");
  return out;
}

TEST(WorkerCommand, TwoCpuWorkersJudgeAsALocalRunAndTheStatusListsThem) {
  test::TempDir dir("worker-command");
  test::RedisServer server(dir.path() / "redis", kPassword);
  const fs::path candidates =
      candidate_folder(dir.path() / "candidates", {"plain_pytorch_add.py", "syntax_error.py", "no_model_new.py"});
  core::Process a = start_worker(server.url(), dir.path(), "a");
  // b holds a job ahead of the one it judges, as a GPU worker does by default: the verdicts stay a local run's.
  core::Process b = start_worker(server.url(), dir.path(), "b", {"--hold-ahead", "1"});
  queue::RedisConnection redis(queue::parse_redis_url(server.url()));
  wait_for_workers(redis, 2, dir.path());

  const fs::path log = dir.path() / "commands.log";
  const auto status = test::run_vinci("worker", {"--status", "--queue", server.url()}, log, 60s);
  ASSERT_EQ(status.status.code, 0) << core::try_read_file(log).value_or("");
  EXPECT_NE(status.out.find("2 live workers"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("a/cpu0"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("b/cpu0"), std::string::npos) << status.out;
  const auto json_status = test::run_vinci("worker", {"--status", "--json", "--queue", server.url()}, log, 60s);
  const auto j = nlohmann::json::parse(json_status.out);
  ASSERT_EQ(j.at("workers").size(), 2u) << json_status.out;
  EXPECT_EQ(j["workers"][0]["evaluator"]["device_kind"], "cpu");
  EXPECT_EQ(j["workers"][1]["pid"], b.pid());

  auto queued_args = eval_args(candidates, dir.path() / "queued.jsonl");
  queued_args.insert(queued_args.end(), {"--queue", server.url()});
  const auto started = std::chrono::steady_clock::now();
  const auto queued = test::run_vinci("eval", queued_args, log, 300s);
  const double queued_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(queued.status.code, 0) << queued.out << core::try_read_file(log).value_or("");
  EXPECT_NE(queued.out.find("3 results (0 from cache)"), std::string::npos) << queued.out;

  auto local_args = eval_args(candidates, dir.path() / "local.jsonl");
  local_args.insert(local_args.end(), {"--no-cache", "--cache-dir", (dir.path() / "local-cache").string()});
  const auto local_started = std::chrono::steady_clock::now();
  const auto local = test::run_vinci("eval", local_args, log, 300s);
  const double local_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - local_started).count();
  ASSERT_EQ(local.status.code, 0) << local.out << core::try_read_file(log).value_or("");
  std::printf("queued run %.1f s, local run %.1f s\n", queued_s, local_s);

  const auto expected = verdicts(dir.path() / "local.jsonl");
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(expected.at("plain_pytorch_add.py"), "correct/");
  EXPECT_EQ(verdicts(dir.path() / "queued.jsonl"), expected);

  long long evaluated = 0;
  for (const auto& w : queue::read_status(redis, {}).workers) evaluated += w.evaluated;
  EXPECT_EQ(evaluated, 3);

  // SIGTERM: each finishes what it holds (nothing now), takes its heartbeat away and exits 0.
  ::kill(a.pid(), SIGTERM);
  ::kill(b.pid(), SIGTERM);
  for (core::Process* p : {&a, &b}) {
    const auto exit = p->wait_for(60s);
    ASSERT_TRUE(exit) << "a worker did not stop on SIGTERM";
    EXPECT_TRUE(exit->exited && exit->code == 0) << exit->describe();
  }
  EXPECT_TRUE(live_names(redis).empty());
}

// A candidate that takes a few seconds to construct, so a worker is killed while judging it.
constexpr const char* kSlowCandidate = R"(# vinci-task: level1/1_Add
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep(3)

    def forward(self, a, b):
        return torch.add(a, b)
)";

TEST(WorkerCommand, AWorkerKilledMidCandidateLeavesItToTheOther) {
  test::TempDir dir("worker-command");
  test::RedisServer server(dir.path() / "redis", kPassword);
  core::write_file_atomic(dir.path() / "candidates/slow_add.py", kSlowCandidate);
  const std::vector<std::string> quick_reclaim{"--visibility-timeout", "2"};
  core::Process victim = start_worker(server.url(), dir.path(), "victim", quick_reclaim);
  queue::RedisConnection redis(queue::parse_redis_url(server.url()));
  wait_for_workers(redis, 1, dir.path());

  core::SpawnOptions submit;
  submit.argv = {VINCI_BINARY, "eval"};
  auto args = eval_args(dir.path() / "candidates", dir.path() / "results.jsonl");
  submit.argv.insert(submit.argv.end(), args.begin(), args.end());
  submit.argv.insert(submit.argv.end(), {"--queue", server.url()});
  submit.stderr_path = dir.path() / "submitter.log";
  core::Process submitter = core::Process::spawn(submit);

  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (queue::read_status(redis, {}).pending == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the victim never took the job";
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(1s);  // into the judge: its start and the candidate's 3 s construction
  ASSERT_EQ(queue::read_status(redis, {}).results_last_minute, 0) << "the victim finished before it was killed";
  ::kill(victim.pid(), SIGKILL);
  victim.wait();

  core::Process survivor = start_worker(server.url(), dir.path(), "survivor", quick_reclaim);
  const auto done = submitter.wait_for(300s);
  ASSERT_TRUE(done) << "the submitter did not finish; "
                    << core::try_read_file(dir.path() / "submitter.log").value_or("");
  EXPECT_TRUE(done->exited && done->code == 0) << core::try_read_file(dir.path() / "submitter.log").value_or("");

  const auto results = test::read_jsonl(dir.path() / "results.jsonl");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].at("class"), "correct") << results[0].dump();
  // One result in the store, the survivor's, on the job's second delivery.
  std::vector<std::string> stored;
  std::string cursor = "0";
  do {
    const auto page = redis.command({"SCAN", cursor, "MATCH", queue::QueueLayout{}.result("*")});
    cursor = page.array().at(0).str();
    for (const auto& k : page.array().at(1).array()) stored.push_back(k.str());
  } while (cursor != "0");
  ASSERT_EQ(stored.size(), 1u);
  const auto record = queue::result_record_from_json(nlohmann::json::parse(redis.command({"GET", stored[0]}).str()));
  EXPECT_EQ(record.worker, "survivor/cpu0");
  EXPECT_EQ(record.deliveries, 2);
}

TEST(WorkerCommand, AWrongPasswordIsRefusedInOneLineWithExitCode4) {
  test::TempDir dir("worker-command");
  test::RedisServer server(dir.path() / "redis", kPassword);
  const std::string where = fmt::format("127.0.0.1:{}", server.port());
  const std::string wrong = server.url("not-the-password");
  const fs::path candidates = candidate_folder(dir.path() / "candidates", {"syntax_error.py"});
  // train rl takes its queue from the config's [eval] queue.
  const fs::path config = dir.path() / "rl.toml";
  std::ofstream(config) << fmt::format("[eval]\nqueue = \"{}\"\n", wrong);
  const fs::path llm_fixtures = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"train",
       {"rl", "--config", config.string(), "--model", (llm_fixtures / "models/qwen2").string(), "--chat-template",
        (llm_fixtures / "templates/qwen2_5.jinja").string(), "--model-device", "cpu", "--tasks",
        (fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/agents").string(), "--device", "cpu", "--out",
        (dir.path() / "rl").string()}},
      {"worker", {"--queue", wrong, "--device", "cpu"}},
      {"worker", {"--status", "--queue", wrong}},
      {"eval", [&] {
         auto a = eval_args(candidates, dir.path() / "out.jsonl");
         a.insert(a.end(), {"--queue", wrong});
         return a;
       }()}};
  for (const auto& [command, args] : commands) {
    const fs::path log = dir.path() / fmt::format("{}-{}.log", command, args.size());
    const auto r = test::run_vinci(command, args, log, 120s);
    const std::string err = core::try_read_file(log).value_or("");
    EXPECT_TRUE(r.status.exited && r.status.code == 4) << command << ": " << r.status.describe() << "\n" << err;
    // eval may warn about the suite's files first; the worker says nothing before the error.
    if (command == "worker") {
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    std::vector<std::string> errors;
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("vinci: error: ")) errors.push_back(line);
    ASSERT_EQ(errors.size(), 1u) << command << ": " << err;
    EXPECT_NE(errors[0].find(where), std::string::npos) << err;
    EXPECT_NE(errors[0].find("refused the credentials"), std::string::npos) << err;
    EXPECT_EQ(err.find("not-the-password"), std::string::npos) << err;
  }
}

}  // namespace vinci::cli::worker_command_test
