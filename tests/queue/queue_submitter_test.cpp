// The submitter as the judge's callers see it, against a real redis-server and workers whose verdict
// is a callback: the evaluator chosen from heartbeats, results in job order under this run's names,
// a pair given twice queued once, a stop that leaves not_evaluated results and the jobs queued.
#include "queue/queue_submitter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/files.h"
#include "core/setup_error.h"
#include "eval/candidate.h"
#include "eval/task.h"
#include "queue/queue_worker.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::queue_submitter_test {

using namespace std::chrono_literals;

WorkerEvaluator cpu_evaluator(std::string version = "judge-1") { return {"cpu", "cpu", "2.11.0", std::move(version)}; }

WorkerStatus live(std::string name, std::optional<WorkerEvaluator> e) {
  WorkerStatus w;
  w.name = std::move(name);
  w.evaluator = std::move(e);
  return w;
}

TEST(QueueSubmitter, ChoosesTheOneEvaluatorOfTheDevice) {
  const WorkerEvaluator cpu = cpu_evaluator(), gpu{"cuda", "NVIDIA H200", "2.11.0", "judge-1"};
  EXPECT_FALSE(choose_evaluator({}, "cpu"));
  EXPECT_FALSE(choose_evaluator({live("a", gpu), live("untagged", std::nullopt)}, "cpu"));
  EXPECT_EQ(choose_evaluator({live("a", cpu), live("b", cpu), live("c", gpu)}, "cpu"), cpu);
  EXPECT_EQ(choose_evaluator({live("a", cpu), live("c", gpu)}, "cuda"), gpu);
  EXPECT_EQ(choose_evaluator({live("a", cpu), live("c", gpu)}, "auto"), gpu);
  EXPECT_EQ(choose_evaluator({live("a", cpu)}, "auto"), cpu);
  try {
    choose_evaluator({live("a", cpu), live("b", cpu_evaluator("judge-2"))}, "cpu");
    ADD_FAILURE() << "two evaluators of one device were not refused";
  } catch (const core::SetupError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bring 2 evaluators"), std::string::npos) << what;
    EXPECT_NE(what.find("judge-2"), std::string::npos) << what;
  }
}

class QueueSubmitterRun : public ::testing::Test {
 protected:
  QueueSubmitterRun() : server_(dir_.path() / "redis", "submitter-password") {
    core::write_file_atomic(dir_.path() / "tasks/level1/1_Add.py", "class Model: pass\n");
    task_ = eval::task_from_file(dir_.path() / "tasks/level1/1_Add.py");
  }
  ~QueueSubmitterRun() override {
    stop_ = true;
    for (auto& t : workers_) t.join();
  }

  RedisUrl url() const { return parse_redis_url(server_.url()); }

  eval::Job job(const std::string& file, const std::string& source) {
    core::write_file_atomic(dir_.path() / "candidates" / file, source);
    return {task_, eval::load_candidate(dir_.path() / "candidates" / file)};
  }

  // A worker of evaluator e whose verdict is correct when the candidate's source says "fast".
  void start_worker(std::string name, WorkerEvaluator e, std::atomic<int>* evaluated = nullptr) {
    std::atomic<bool> announced = false;
    workers_.emplace_back([this, name, e, evaluated, &announced] {
      RedisConnection redis(url());
      WorkerOptions o;
      o.name = name;
      o.block = 100ms;
      o.evaluator = e;
      QueueWorker worker(redis, o, [&](const QueueJob& j) {
        if (evaluated) ++*evaluated;
        eval::Result r;
        r.task = "worker's own name";
        r.candidate = "/worker/copy.py";
        r.verdict =
            j.candidate_source.find("fast") != std::string::npos ? eval::Verdict::correct : eval::Verdict::incorrect;
        return r;
      });
      announced = true;
      while (!stop_) worker.step();
    });
    while (!announced) std::this_thread::sleep_for(10ms);
  }

  test::TempDir dir_{"queue-submitter"};
  test::RedisServer server_;
  eval::Task task_;
  std::atomic<bool> stop_ = false;
  std::vector<std::thread> workers_;
};

TEST_F(QueueSubmitterRun, ResultsComeInJobOrderUnderThisRunsNames) {
  std::atomic<int> evaluated = 0;
  start_worker("w", cpu_evaluator(), &evaluated);
  eval::EvalConfig config;
  config.device = "cpu";
  RedisConnection redis(url());
  QueueSubmitter submitter(redis, config);
  EXPECT_EQ(submitter.evaluator(), cpu_evaluator());
  const std::vector<eval::Job> jobs{job("a.py", "# fast\n"), job("b.py", "# slow\n"), job("twin_of_a.py", "# fast\n")};
  std::vector<std::string> seen;
  const auto results = submitter.run(jobs, [&](const eval::Result& r) { seen.push_back(r.candidate); });
  ASSERT_EQ(results.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i].candidate, jobs[i].candidate.file.string());
    EXPECT_EQ(results[i].task, "level1/1_Add");
    EXPECT_EQ(results[i].task_number, 1);
  }
  EXPECT_EQ(results[0].verdict, eval::Verdict::correct);
  EXPECT_EQ(results[1].verdict, eval::Verdict::incorrect);
  EXPECT_EQ(results[2].verdict, eval::Verdict::correct);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(evaluated, 2);  // the twin was queued once

  // Again: answered from the store, judged by nobody.
  const auto again = submitter.run(jobs, {});
  EXPECT_EQ(again[1].verdict, eval::Verdict::incorrect);
  EXPECT_TRUE(again[1].cached);
  EXPECT_EQ(evaluated, 2);
  EXPECT_EQ(submitter.stats().from_store, 2);
}

TEST_F(QueueSubmitterRun, AStoppedRunEndsItsJobsAsNotEvaluatedAndLeavesThemQueued) {
  // Another evaluator's worker, so the submitter finds one, but nobody judges this evaluator's jobs.
  start_worker("announcer", cpu_evaluator());
  eval::EvalConfig config;
  config.device = "cpu";
  RedisConnection redis(url());
  QueueSubmitter submitter(redis, config);
  stop_ = true;
  for (auto& t : workers_) t.join();
  workers_.clear();
  std::atomic<bool> interrupt = false;
  submitter.stop_at(std::chrono::steady_clock::now() + 1s, &interrupt);
  const auto results = submitter.run({job("a.py", "# fast\n")}, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict, eval::Verdict::timeout);
  EXPECT_EQ(results[0].reason, "not_evaluated");
  EXPECT_EQ(results[0].candidate, (dir_.path() / "candidates/a.py").string());
  const QueueStatus status = read_status(redis, {});
  EXPECT_EQ(status.waiting, 1);
}

}  // namespace vinci::queue::queue_submitter_test
