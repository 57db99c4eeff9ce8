// The queue against a real redis-server: submitters, workers (threads, and forked processes that are
// killed), a server killed and restarted. The evaluator is a callback whose verdict the test knows
// beforehand: a candidate numbered n is correct when n is even.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "queue/job_queue.h"
#include "queue/queue_status.h"
#include "queue/queue_worker.h"
#include "support/captured_log.h"
#include "support/queue_jobs.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::queue_test {

using namespace std::chrono_literals;

constexpr const char* kPassword = "queue-test-password";

using test::job_number;
using test::numbered_job;

eval::Result verdict_by_parity(const QueueJob& job) {
  eval::Result r;
  r.task = job.task_id;
  r.candidate = job.candidate_name;
  r.verdict = job_number(job) % 2 == 0 ? eval::Verdict::correct : eval::Verdict::incorrect;
  return r;
}

RedisConnection connect(const test::RedisServer& server) { return RedisConnection(parse_redis_url(server.url())); }

WorkerOptions worker_options(std::string name) {
  WorkerOptions o;
  o.name = std::move(name);
  o.block = 200ms;
  return o;
}

// Steps until the outcome is not idle, or fails the test after a generous minute.
StepOutcome step_until_busy(QueueWorker& worker) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    const StepOutcome o = worker.step();
    if (o != StepOutcome::idle) return o;
  }
  ADD_FAILURE() << "no job reached the worker within a minute";
  return StepOutcome::idle;
}

long long stream_length(RedisConnection& redis, const std::string& stream) {
  return redis.command({"XLEN", stream}).as_integer();
}

long long pending(RedisConnection& redis) {
  const QueueLayout l;
  return redis.command({"XPENDING", l.stream(), l.group()}).array().at(0).as_integer();
}

TEST(Queue, TwoWorkersOneSubmitterGiveEachKeyOneResult) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection submitter_redis = connect(server);
  JobQueue queue(submitter_redis);
  constexpr int kJobs = 24;
  std::vector<std::string> keys;
  for (int n = 0; n < kJobs; ++n) {
    const QueueJob job = numbered_job(n);
    ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);
    keys.push_back(job.key);
  }
  std::mutex mu;
  std::multiset<std::string> evaluated;
  std::atomic<bool> stop = false;
  auto serve = [&](std::string name) {
    RedisConnection redis = connect(server);
    QueueWorker worker(redis, worker_options(name), [&](const QueueJob& job) {
      std::lock_guard lock(mu);
      evaluated.insert(job.key);
      return verdict_by_parity(job);
    });
    while (!stop) worker.step();
  };
  std::thread a(serve, "host-a/0"), b(serve, "host-b/0");
  const auto results = queue.wait(keys, 120s);
  stop = true;
  a.join();
  b.join();
  ASSERT_EQ(results.size(), static_cast<size_t>(kJobs));
  for (int n = 0; n < kJobs; ++n) {
    const ResultRecord& r = results.at(keys[n]);
    EXPECT_EQ(r.result.verdict, n % 2 == 0 ? eval::Verdict::correct : eval::Verdict::incorrect) << n;
    EXPECT_EQ(r.result.candidate, fmt::format("c{}.py", n));
    EXPECT_TRUE(r.worker == "host-a/0" || r.worker == "host-b/0") << r.worker;
    EXPECT_EQ(r.deliveries, 1);
  }
  EXPECT_EQ(evaluated, std::multiset<std::string>(keys.begin(), keys.end()));  // each key evaluated once
  EXPECT_EQ(stream_length(submitter_redis, QueueLayout{}.results()), kJobs);   // each result written once
  EXPECT_EQ(pending(submitter_redis), 0);
}

TEST(Queue, DuplicateSubmissionsAreEvaluatedOnce) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(4);
  EXPECT_EQ(queue.submit(job), SubmitOutcome::queued);
  EXPECT_EQ(queue.submit(job), SubmitOutcome::in_flight);
  RedisConnection worker_redis = connect(server);
  int calls = 0;
  QueueWorker worker(worker_redis, worker_options("w"), [&](const QueueJob& j) {
    ++calls;
    return verdict_by_parity(j);
  });
  EXPECT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  EXPECT_EQ(worker.step(), StepOutcome::idle);
  EXPECT_EQ(queue.submit(job), SubmitOutcome::done);
  EXPECT_EQ(worker.step(), StepOutcome::idle);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(stream_length(redis, QueueLayout{}.stream()), 1);
  ASSERT_TRUE(queue.result(job.key));
  EXPECT_EQ(queue.result(job.key)->result.verdict, eval::Verdict::correct);
  const auto twice = queue.wait({job.key, job.key}, 60s);  // a key asked for twice is answered once
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_EQ(twice.at(job.key).worker, "w");
  EXPECT_TRUE(queue.wait({}, 60s).empty());
}

// A worker process that takes one job, tells the parent through a pipe and then hangs there, or
// kills itself in the callback: the two ways a worker dies mid-candidate. Never returns.
[[noreturn]] void doomed_worker(const test::RedisServer& server, WorkerOptions options, int tell_fd,
                                bool die_in_callback) {
  try {
    RedisConnection redis = connect(server);
    QueueWorker worker(redis, std::move(options), [&](const QueueJob&) -> eval::Result {
      const char byte = 'x';
      if (::write(tell_fd, &byte, 1) != 1) ::_exit(4);
      if (die_in_callback) ::raise(SIGKILL);
      for (;;) ::pause();
    });
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) worker.step();
  } catch (...) {
    ::_exit(3);
  }
  ::_exit(2);
}

pid_t fork_doomed_worker(const test::RedisServer& server, WorkerOptions options, int pipe_fds[2],
                         bool die_in_callback) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    doomed_worker(server, std::move(options), pipe_fds[1], die_in_callback);
  }
  return pid;
}

TEST(Queue, KilledWorkersJobIsFinishedByAnother) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(2);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = fork_doomed_worker(server, worker_options("doomed"), fds, /*die_in_callback=*/false);
  ASSERT_GT(child, 0);
  ::close(fds[1]);
  char byte = 0;
  ASSERT_EQ(::read(fds[0], &byte, 1), 1) << "the doomed worker never started the job";
  ::close(fds[0]);
  ::kill(child, SIGKILL);  // mid-candidate
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(queue.result(job.key));

  RedisConnection survivor_redis = connect(server);
  WorkerOptions options = worker_options("survivor");
  options.visibility_timeout = 300ms;
  int calls = 0;
  QueueWorker survivor(survivor_redis, options, [&](const QueueJob& j) {
    ++calls;
    return verdict_by_parity(j);
  });
  EXPECT_EQ(step_until_busy(survivor), StepOutcome::evaluated);
  EXPECT_EQ(calls, 1);
  const auto record = queue.result(job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->worker, "survivor");
  EXPECT_EQ(record->deliveries, 2);
  EXPECT_EQ(record->result.verdict, eval::Verdict::correct);
  EXPECT_EQ(stream_length(redis, QueueLayout{}.results()), 1);
  EXPECT_EQ(pending(redis), 0);
}

TEST(Queue, JobThatKillsEveryWorkerEndsAsWorkerLost) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(7);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);

  constexpr int kMaxDeliveries = 2;
  auto options = [&](std::string name) {
    WorkerOptions o = worker_options(std::move(name));
    o.visibility_timeout = 200ms;
    o.max_deliveries = kMaxDeliveries;
    return o;
  };
  for (int attempt = 1; attempt <= kMaxDeliveries; ++attempt) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child =
        fork_doomed_worker(server, options(fmt::format("victim-{}", attempt)), fds, /*die_in_callback=*/true);
    ASSERT_GT(child, 0);
    ::close(fds[1]);
    char byte = 0;
    EXPECT_EQ(::read(fds[0], &byte, 1), 1) << "victim " << attempt << " never started the job";
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "victim " << attempt << " status " << status;
  }

  RedisConnection last_redis = connect(server);
  QueueWorker last(last_redis, options("last"), [](const QueueJob&) -> eval::Result {
    ADD_FAILURE() << "a job past its deliveries was evaluated again";
    return {};
  });
  test::CapturedLog log;
  EXPECT_EQ(step_until_busy(last), StepOutcome::worker_lost);
  EXPECT_NE(log.str().find("was delivered 2 times and no worker finished it"), std::string::npos) << log.str();
  const auto record = queue.result(job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->deliveries, kMaxDeliveries + 1);
  EXPECT_EQ(record->result.verdict, eval::Verdict::runtime_error);
  EXPECT_EQ(record->result.reason, "worker_lost");
  EXPECT_EQ(record->result.task, "level1/19_ReLU");
  EXPECT_EQ(record->result.candidate, "c7.py");
  EXPECT_EQ(pending(redis), 0);
}

TEST(Queue, MalformedAndForeignEntriesAreRefusedAndTheWorkerServesOn) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const std::string stream = QueueLayout{}.stream();
  redis.command({"XADD", stream, "*", "hello", "world"});
  redis.command({"XADD", stream, "*", "format", "celery-v2", "body", "{}"});
  redis.command({"XADD", stream, "*", "format", kJobFormat, "job", "{\"key\": 12"});
  nlohmann::json wrong_key = to_json(numbered_job(1));
  wrong_key["key"] = "00000000000000000000000000000000";
  redis.command({"XADD", stream, "*", "format", kJobFormat, "job", wrong_key.dump()});
  const QueueJob good = numbered_job(6);
  ASSERT_EQ(queue.submit(good), SubmitOutcome::queued);

  RedisConnection worker_redis = connect(server);
  QueueWorker worker(worker_redis, worker_options("w"), verdict_by_parity);
  test::CapturedLog log;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(step_until_busy(worker), StepOutcome::refused) << i;
  EXPECT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  EXPECT_EQ(worker.stats().refused, 4);
  const std::string text = log.str();
  EXPECT_NE(text.find("refusing stream entry"), std::string::npos) << text;
  EXPECT_NE(text.find("no 'format' field"), std::string::npos) << text;
  EXPECT_NE(text.find("format 'celery-v2'"), std::string::npos) << text;
  EXPECT_NE(text.find("not JSON"), std::string::npos) << text;
  EXPECT_NE(text.find("is not its contents' key"), std::string::npos) << text;
  ASSERT_TRUE(queue.result(good.key));
  EXPECT_EQ(pending(redis), 0);  // refused entries are not handed out again
}

TEST(Queue, WrongOrMissingPasswordIsRefusedAtConnect) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  try {
    RedisConnection redis(parse_redis_url(server.url("not-the-password")));
    ADD_FAILURE() << "a wrong password was accepted";
  } catch (const RedisAuthError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("refused the credentials"), std::string::npos) << what;
    EXPECT_NE(what.find(fmt::format("127.0.0.1:{}", server.port())), std::string::npos) << what;
    EXPECT_EQ(what.find("not-the-password"), std::string::npos) << what;
  }
  try {
    RedisConnection redis(parse_redis_url(fmt::format("redis://127.0.0.1:{}", server.port())));
    ADD_FAILURE() << "no password was accepted";
  } catch (const RedisAuthError& e) {
    EXPECT_NE(std::string(e.what()).find("it needs a password"), std::string::npos) << e.what();
  }
}

TEST(Queue, RestartedServerLosesNoJobOrResult) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  constexpr int kJobs = 10;
  std::vector<QueueJob> jobs;
  std::vector<std::string> keys;
  for (int n = 0; n < kJobs; ++n) {
    jobs.push_back(numbered_job(n));
    keys.push_back(jobs.back().key);
    ASSERT_EQ(queue.submit(jobs.back()), SubmitOutcome::queued);
  }
  RedisConnection worker_redis = connect(server);
  std::multiset<std::string> evaluated;
  QueueWorker worker(worker_redis, worker_options("w"), [&](const QueueJob& job) {
    evaluated.insert(job.key);
    return verdict_by_parity(job);
  });
  for (int i = 0; i < kJobs / 2; ++i) ASSERT_EQ(step_until_busy(worker), StepOutcome::evaluated);

  server.kill9();
  server.start();

  // The submitter resumes: what finished is answered from the store, what was queued is not queued twice.
  int done = 0, in_flight = 0;
  for (const auto& job : jobs) {
    const SubmitOutcome o = queue.submit(job);
    done += o == SubmitOutcome::done;
    in_flight += o == SubmitOutcome::in_flight;
  }
  EXPECT_EQ(done, kJobs / 2);
  EXPECT_EQ(in_flight, kJobs / 2);
  for (int i = 0; i < kJobs / 2; ++i) ASSERT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  const auto results = queue.wait(keys, 60s);
  ASSERT_EQ(results.size(), static_cast<size_t>(kJobs));
  for (int n = 0; n < kJobs; ++n)
    EXPECT_EQ(results.at(keys[n]).result.verdict, n % 2 == 0 ? eval::Verdict::correct : eval::Verdict::incorrect);
  EXPECT_EQ(evaluated, std::multiset<std::string>(keys.begin(), keys.end()));
  EXPECT_EQ(stream_length(redis, QueueLayout{}.results()), kJobs);
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

// docs/distributed.md's ACL lines, as the docs give them: `user NAME RULE...`.
std::vector<std::vector<std::string>> documented_acl_users() {
  std::ifstream in(std::filesystem::path(VINCI_SOURCE_ROOT) / "docs/distributed.md");
  std::vector<std::vector<std::string>> users;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("user ")) continue;
    std::istringstream words(line.substr(5));
    std::vector<std::string> rules{"ACL", "SETUSER"};
    for (std::string w; words >> w;) rules.push_back(w);
    users.push_back(rules);
  }
  return users;
}

TEST(Queue, AclUsersOfTheDocs) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection admin = connect(server);
  const auto users = documented_acl_users();
  ASSERT_EQ(users.size(), 3u) << "docs/distributed.md should list the worker, the submitter and the default user";
  for (const auto& rules : users) admin.command(rules);
  const auto url = [&](const char* user, const char* password) {
    return parse_redis_url(fmt::format("redis://{}:{}@127.0.0.1:{}", user, password, server.port()));
  };

  RedisConnection submitter_redis(url("vinci-submitter", "CHANGE-ME-submitter"));
  JobQueue queue(submitter_redis);
  const QueueJob job = numbered_job(8);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);
  RedisConnection worker_redis(url("vinci-worker", "CHANGE-ME-worker"));
  QueueWorker worker(worker_redis, worker_options("w"), verdict_by_parity);
  EXPECT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  const auto results = queue.wait({job.key}, 60s);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.at(job.key).result.verdict, eval::Verdict::correct);
  EXPECT_EQ(queue.submit(job), SubmitOutcome::done);

  // What only workers may do: write, overwrite or delete a result, announce one, acknowledge a job.
  const QueueLayout l;
  const std::vector<std::vector<std::string>> forbidden{
      {"SET", l.result(job.key), "{}"},
      {"SET", l.result("another-key"), "{}"},
      {"DEL", l.result(job.key)},
      {"XADD", l.results(), "*", "key", job.key},
      {"XACK", l.stream(), l.group(), "0-1"},
      {"EVAL", "return redis.call('SET', KEYS[1], 'forged')", "1", l.result(job.key)},
      {"EVAL", "return redis.call('SET', ARGV[1], 'forged')", "0", l.result(job.key)},
  };
  for (const auto& command : forbidden) {
    try {
      submitter_redis.command(command);
      ADD_FAILURE() << "the submitter was allowed " << command.at(0) << " " << command.at(1);
    } catch (const RedisCommandError& e) {
      // NOPERM for a command, "can't access" for a command inside a script.
      const std::string what = e.what();
      EXPECT_TRUE(what.find("NOPERM") != std::string::npos || what.find("can't access") != std::string::npos) << what;
    }
  }
  EXPECT_EQ(queue.result(job.key)->worker, "w");
  EXPECT_THROW(RedisConnection(parse_redis_url(server.url())), RedisAuthError);  // the default user is off

  // What the commands do besides: a submitter learns the evaluators from the heartbeats and submits
  // to an evaluator's stream; both read the status.
  EXPECT_EQ(live_workers(submitter_redis, l).size(), 1u);
  JobQueue tagged(submitter_redis, l.for_evaluator("0123456789abcdef"));
  EXPECT_EQ(tagged.submit(numbered_job(9)), SubmitOutcome::queued);
  for (RedisConnection* r : {&submitter_redis, &worker_redis}) {
    const QueueStatus status = read_status(*r, l);
    EXPECT_EQ(status.workers.size(), 1u);
    EXPECT_EQ(status.streams.size(), 2u);
    EXPECT_EQ(status.waiting, 1);
  }
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

// The idle time Redis holds for a pending entry: what XAUTOCLAIM compares with the visibility timeout.
long long idle_ms(RedisConnection& redis, const std::string& id) {
  const QueueLayout l;
  const RedisReply r = redis.command({"XPENDING", l.stream(), l.group(), id, id, "1"});
  return r.array().empty() ? -1 : r.array()[0].array().at(2).as_integer();
}

TEST(Queue, AnEvaluationLongerThanTheVisibilityTimeoutKeepsItsJob) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(10);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);
  const std::string id = redis.command({"XRANGE", QueueLayout{}.stream(), "-", "+"}).array().at(0).array().at(0).str();

  constexpr auto kVisibility = 1500ms;  // renewed every 500 ms: a second of margin on a busy machine
  RedisConnection rival_redis = connect(server);
  WorkerOptions rival_options = worker_options("rival");
  rival_options.visibility_timeout = kVisibility;
  rival_options.block = 50ms;
  QueueWorker rival(rival_redis, rival_options, [](const QueueJob&) -> eval::Result {
    ADD_FAILURE() << "a job under a live lease was claimed";
    return {};
  });
  RedisConnection worker_redis = connect(server);
  WorkerOptions options = worker_options("slow");
  options.visibility_timeout = kVisibility;
  RedisConnection watcher = connect(server);
  int renewals = 0;
  QueueWorker worker(worker_redis, options, [&](const QueueJob& j) {
    // The evaluation lasts until the lease has reset the job's idle time six times: two visibility
    // timeouts at least, all the while a rival worker tries to claim it.
    long long previous = idle_ms(watcher, id);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (renewals < 6 && std::chrono::steady_clock::now() < deadline) {
      EXPECT_EQ(rival.step(), StepOutcome::idle);
      const long long now = idle_ms(watcher, id);
      if (now < previous) ++renewals;
      previous = now;
    }
    return verdict_by_parity(j);
  });
  EXPECT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  EXPECT_EQ(renewals, 6);
  const auto record = queue.result(job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->deliveries, 1);  // renewals are not deliveries
  EXPECT_EQ(record->worker, "slow");
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

// Waits until the server has rewritten its append-only file, so the next start loads a snapshot, which
// --key-load-delay slows down key by key.
void rewrite_append_only_file(RedisConnection& redis) {
  redis.command({"BGREWRITEAOF"});
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const std::string info = redis.command({"INFO", "persistence"}).str();
    if (info.find("aof_rewrite_in_progress:0") != std::string::npos &&
        info.find("aof_rewrite_scheduled:0") != std::string::npos)
      return;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the append-only file was not rewritten in a minute";
    std::this_thread::sleep_for(20ms);
  }
}

TEST(Queue, AServerStillLoadingItsDataIsWaitedFor) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  constexpr int kJobs = 20;
  for (int n = 0; n < kJobs; ++n) ASSERT_EQ(queue.submit(numbered_job(n)), SubmitOutcome::queued);
  // Loading answers clients only between chunks of loading-process-events-interval-bytes (1024 at
  // least): keys of 2 KB give a chance after each one.
  for (int n = 0; n < 40; ++n) redis.command({"SET", fmt::format("filler:{}", n), std::string(2048, 'x')});
  rewrite_append_only_file(redis);
  server.kill9();
  // 25 ms a key: about 1.5 s of LOADING for its 60 keys and more.
  server.start({"--key-load-delay", "25000", "--loading-process-events-interval-bytes", "1024"});

  test::CapturedLog log;
  RedisConnection fresh = connect(server);  // connecting waits too
  JobQueue resumed(fresh);
  EXPECT_EQ(resumed.submit(numbered_job(0)), SubmitOutcome::in_flight);
  EXPECT_EQ(queue.submit(numbered_job(1)), SubmitOutcome::in_flight);  // the connection of before the restart
  EXPECT_NE(log.str().find("the server is loading its data"), std::string::npos) << log.str();
  EXPECT_EQ(stream_length(fresh, QueueLayout{}.stream()), kJobs);
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

TEST(Queue, AnEvaluatorThatThrowsLeavesItsJobToAnotherWorker) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(12);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);

  RedisConnection broken_redis = connect(server);
  WorkerOptions broken_options = worker_options("broken");
  broken_options.visibility_timeout = 300ms;
  QueueWorker broken(broken_redis, broken_options,
                     [](const QueueJob&) -> eval::Result { throw std::runtime_error("the judge did not start"); });
  test::CapturedLog log;
  EXPECT_EQ(step_until_busy(broken), StepOutcome::failed);
  EXPECT_NE(log.str().find("the judge did not start"), std::string::npos) << log.str();
  EXPECT_FALSE(queue.result(job.key));  // no verdict is made up for the candidate
  EXPECT_EQ(pending(redis), 1);

  RedisConnection healthy_redis = connect(server);
  WorkerOptions healthy_options = worker_options("healthy");
  healthy_options.visibility_timeout = 300ms;
  QueueWorker healthy(healthy_redis, healthy_options, verdict_by_parity);
  EXPECT_EQ(step_until_busy(healthy), StepOutcome::evaluated);
  const auto record = queue.result(job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->worker, "healthy");
  EXPECT_EQ(record->deliveries, 2);
  EXPECT_EQ(record->result.verdict, eval::Verdict::correct);
  EXPECT_EQ(broken.stats().failed, 1);
  EXPECT_EQ(pending(redis), 0);
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

TEST(Queue, AWorkerServesOnAfterTheServerLostItsData) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  RedisConnection worker_redis = connect(server);
  QueueWorker worker(worker_redis, worker_options("w"), verdict_by_parity);
  EXPECT_EQ(worker.step(), StepOutcome::idle);

  redis.command({"FLUSHALL"});  // what a restart without an append-only file leaves
  test::CapturedLog log;
  EXPECT_EQ(worker.step(), StepOutcome::idle);
  EXPECT_NE(log.str().find("the jobs stream or its group is gone"), std::string::npos) << log.str();
  const QueueJob job = numbered_job(14);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);
  EXPECT_EQ(step_until_busy(worker), StepOutcome::evaluated);
  ASSERT_TRUE(queue.result(job.key));
  EXPECT_EQ(queue.result(job.key)->result.verdict, eval::Verdict::correct);
}

}  // namespace vinci::queue::queue_test

namespace vinci::queue::queue_test {

// A worker that stops mid-evaluation hands its job back at once: another worker takes it without
// waiting out the visibility timeout, and nobody counts it a failure.
TEST(Queue, AReleasedJobIsTakenAtOnceByAnother) {
  test::TempDir dir("queue");
  test::RedisServer server(dir.path() / "redis", kPassword);
  RedisConnection redis = connect(server);
  JobQueue queue(redis);
  const QueueJob job = numbered_job(12);
  ASSERT_EQ(queue.submit(job), SubmitOutcome::queued);

  RedisConnection stopping_redis = connect(server);
  QueueWorker stopping(stopping_redis, worker_options("stopping"),
                       [](const QueueJob&) -> eval::Result { throw JobReleased("the worker is stopping"); });
  EXPECT_EQ(step_until_busy(stopping), StepOutcome::released);
  EXPECT_EQ(stopping.stats().released, 1);
  EXPECT_EQ(stopping.stats().failed, 0);

  RedisConnection taker_redis = connect(server);
  QueueWorker taker(taker_redis, worker_options("taker"), verdict_by_parity);  // a 60 s visibility timeout
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(step_until_busy(taker), StepOutcome::evaluated);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  const auto record = queue.result(job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->worker, "taker");
  EXPECT_EQ(record->deliveries, 2);
  EXPECT_EQ(pending(redis), 0);
}

}  // namespace vinci::queue::queue_test
