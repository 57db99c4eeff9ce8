// A worker that takes a job ahead of the one it judges (WorkerOptions::hold_ahead), against a real
// redis-server: the next job is prepared before the current one is judged, each job is judged once,
// and a held job goes back to the queue when its worker stops or dies.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "queue/job_queue.h"
#include "queue/queue_worker.h"
#include "support/queue_jobs.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::hold_ahead_test {

using namespace std::chrono_literals;

constexpr const char* kPassword = "hold-ahead-password";

using test::correct_result;
using test::numbered_job;

RedisConnection connect(const test::RedisServer& server) { return RedisConnection(parse_redis_url(server.url())); }

WorkerOptions options(std::string name, size_t hold_ahead) {
  WorkerOptions o;
  o.name = std::move(name);
  o.block = 200ms;
  o.hold_ahead = hold_ahead;
  return o;
}

long long pending(RedisConnection& redis) {
  const QueueLayout l;
  return redis.command({"XPENDING", l.stream(), l.group()}).array().at(0).as_integer();
}

std::vector<std::string> submit(JobQueue& queue, int jobs) {
  std::vector<std::string> keys;
  for (int n = 0; n < jobs; ++n) {
    const QueueJob job = numbered_job(n);
    EXPECT_EQ(queue.submit(job), SubmitOutcome::queued);
    keys.push_back(job.key);
  }
  return keys;
}

TEST(QueueHoldAhead, TheNextJobIsPreparedBeforeTheCurrentOneIsJudged) {
  test::TempDir dir("hold-ahead");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const std::vector<std::string> keys = submit(queue, 3);

  std::vector<std::string> events;
  RedisConnection worker_redis = connect(server);
  QueueWorker worker(
      worker_redis, options("ahead", 1),
      [&](const QueueJob& job) {
        events.push_back("judge " + job.candidate_name);
        return correct_result(job);
      },
      [&](const QueueJob& job) { events.push_back("prepare " + job.candidate_name); });
  EXPECT_EQ(worker.step(), StepOutcome::evaluated);
  EXPECT_EQ(worker.held_ahead(), 1u);
  EXPECT_EQ(pending(redis), 1);  // the held job: delivered, leased, not judged
  EXPECT_EQ(worker.step(), StepOutcome::evaluated);
  EXPECT_EQ(worker.step(), StepOutcome::evaluated);
  EXPECT_EQ(worker.held_ahead(), 0u);
  EXPECT_EQ(worker.step(), StepOutcome::idle);
  const std::vector<std::string> expected{"prepare c1.py", "judge c0.py", "prepare c2.py", "judge c1.py",
                                          "judge c2.py"};
  EXPECT_EQ(events, expected);
  const auto results = queue.wait(keys, 10s);
  ASSERT_EQ(results.size(), keys.size());
  for (const auto& key : keys) EXPECT_EQ(results.at(key).deliveries, 1);
  EXPECT_EQ(pending(redis), 0);
  EXPECT_EQ(worker.stats().evaluated, 3);
}

// Signing off hands the held job back at once: a worker with the default 60 s visibility timeout
// takes it within seconds.
TEST(QueueHoldAhead, AStoppingWorkerHandsItsHeldJobBackAtOnce) {
  test::TempDir dir("hold-ahead");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const std::vector<std::string> keys = submit(queue, 2);

  int prepared = 0;
  {
    RedisConnection stopping_redis = connect(server);
    QueueWorker stopping(stopping_redis, options("stopping", 1), correct_result, [&](const QueueJob&) { ++prepared; });
    EXPECT_EQ(stopping.step(), StepOutcome::evaluated);
    EXPECT_EQ(stopping.held_ahead(), 1u);
    stopping.sign_off();
    EXPECT_EQ(stopping.held_ahead(), 0u);
    EXPECT_EQ(stopping.stats().released, 1);
  }
  EXPECT_EQ(prepared, 1);

  RedisConnection taker_redis = connect(server);
  QueueWorker taker(taker_redis, options("taker", 0), correct_result);
  const auto started = std::chrono::steady_clock::now();
  StepOutcome outcome = StepOutcome::idle;
  while (outcome == StepOutcome::idle && std::chrono::steady_clock::now() - started < 30s) outcome = taker.step();
  EXPECT_EQ(outcome, StepOutcome::evaluated);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  const auto record = queue.result(keys[1]);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->worker, "taker");
  EXPECT_EQ(record->deliveries, 2);
  EXPECT_EQ(pending(redis), 0);
}

// A worker killed while judging one job and holding the next: after the visibility timeout another
// worker finishes both, one result per key.
TEST(QueueHoldAhead, AKilledWorkersHeldJobIsFinishedByAnother) {
  test::TempDir dir("hold-ahead");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const std::vector<std::string> keys = submit(queue, 2);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    RedisConnection doomed_redis = connect(server);
    QueueWorker doomed(doomed_redis, options("doomed", 1), [&](const QueueJob&) -> eval::Result {
      const char byte = 1;
      (void)!::write(fds[1], &byte, 1);
      ::pause();  // killed here, mid-candidate
      std::_Exit(1);
    });
    doomed.step();
    std::_Exit(1);
  }
  ASSERT_GT(child, 0);
  ::close(fds[1]);
  char byte = 0;
  ASSERT_EQ(::read(fds[0], &byte, 1), 1) << "the doomed worker never started a job";
  ::close(fds[0]);
  EXPECT_EQ(pending(redis), 2);  // the judged job and the held one
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);

  RedisConnection survivor_redis = connect(server);
  WorkerOptions survivor_options = options("survivor", 0);
  survivor_options.visibility_timeout = 300ms;
  int calls = 0;
  QueueWorker survivor(survivor_redis, survivor_options, [&](const QueueJob& job) {
    ++calls;
    return correct_result(job);
  });
  const auto results_by = std::chrono::steady_clock::now() + 30s;
  while (survivor.stats().evaluated < 2 && std::chrono::steady_clock::now() < results_by) survivor.step();
  EXPECT_EQ(calls, 2);
  const auto results = queue.wait(keys, 10s);
  ASSERT_EQ(results.size(), keys.size());
  for (const auto& key : keys) {
    EXPECT_EQ(results.at(key).worker, "survivor");
    EXPECT_EQ(results.at(key).deliveries, 2);
  }
  EXPECT_EQ(redis.command({"XLEN", QueueLayout{}.results()}).as_integer(), 2);
  EXPECT_EQ(pending(redis), 0);
}

}  // namespace vinci::queue::hold_ahead_test
