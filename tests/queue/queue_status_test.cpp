#include "queue/queue_status.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "queue/job_queue.h"
#include "queue/queue_worker.h"
#include "support/queue_jobs.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::queue_status_test {

using namespace std::chrono_literals;

using test::correct_result;
using test::numbered_job;

std::vector<std::string> names(const QueueStatus& s) {
  std::vector<std::string> out;
  for (const auto& w : s.workers) out.push_back(w.name);
  return out;
}

TEST(QueueStatus, CountsWaitingPendingResultsAndLiveWorkers) {
  test::TempDir dir("queue-status");
  test::RedisServer server(dir.path() / "redis", "status-password");
  RedisConnection redis(parse_redis_url(server.url()));
  JobQueue queue(redis);
  const QueueLayout layout;
  redis.command({"XADD", layout.stream(), "*", "not", "a job"});
  for (int n = 0; n < 5; ++n) ASSERT_EQ(queue.submit(numbered_job(n)), SubmitOutcome::queued);
  QueueStatus s = read_status(redis, layout);
  EXPECT_EQ(s.waiting, 6);
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.results_last_minute, 0);
  EXPECT_TRUE(s.workers.empty());

  RedisConnection worker_redis(parse_redis_url(server.url()));
  WorkerOptions options;
  options.name = "host-a/0";
  options.block = 200ms;
  QueueWorker worker(worker_redis, options, correct_result);
  EXPECT_EQ(worker.step(), StepOutcome::refused);
  EXPECT_EQ(worker.step(), StepOutcome::evaluated);
  EXPECT_EQ(worker.step(), StepOutcome::evaluated);
  s = read_status(redis, layout);
  EXPECT_EQ(s.waiting, 3);
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.results_last_minute, 2);
  ASSERT_EQ(names(s), std::vector<std::string>{"host-a/0"});
  EXPECT_EQ(s.workers[0].evaluated, 2);
  EXPECT_EQ(s.workers[0].refused, 1);
  EXPECT_EQ(s.workers[0].pid, ::getpid());

  // A worker that takes a job and dies: its job stays pending, and it drops out when its heartbeat expires.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    try {
      RedisConnection r(parse_redis_url(server.url()));
      WorkerOptions o;
      o.name = "host-b/0";
      o.heartbeat_ttl = 1s;
      QueueWorker doomed(r, o, [&](const QueueJob&) -> eval::Result {
        const char byte = 'x';
        if (::write(fds[1], &byte, 1) != 1) ::_exit(4);
        for (;;) ::pause();
      });
      for (;;) doomed.step();
    } catch (...) {
      ::_exit(3);
    }
  }
  ::close(fds[1]);
  char byte = 0;
  ASSERT_EQ(::read(fds[0], &byte, 1), 1);
  ::close(fds[0]);
  s = read_status(redis, layout);
  EXPECT_EQ(s.waiting, 2);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(names(s), (std::vector<std::string>{"host-a/0", "host-b/0"}));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (names(read_status(redis, layout)).size() > 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  s = read_status(redis, layout);
  EXPECT_EQ(names(s), std::vector<std::string>{"host-a/0"});
  EXPECT_EQ(s.pending, 1);  // until a worker claims it after the visibility timeout
}

}  // namespace vinci::queue::queue_status_test
