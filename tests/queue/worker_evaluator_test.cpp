// A worker judges only jobs keyed for its evaluator: each evaluator has a stream of its own, and a job
// that reaches the wrong one anyway is moved to its own, never judged or failed there.
#include "queue/worker_evaluator.h"

#include <gtest/gtest.h>

#include "queue/job_queue.h"
#include "queue/queue_status.h"
#include "queue/queue_worker.h"
#include "support/captured_log.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::worker_evaluator_test {

using namespace std::chrono_literals;

const WorkerEvaluator kCpu{"cpu", "cpu", "2.11.0", "judge-1"};
const WorkerEvaluator kGpu{"cuda", "NVIDIA H200", "2.11.0", "judge-1"};

QueueJob job_for(const WorkerEvaluator& e) {
  QueueJob job;
  job.task_id = "level1/1_Add";
  job.task_source = "class Model: pass\n";
  job.candidate_name = "c.py";
  job.candidate_source = "class ModelNew: pass\n";
  job.evaluator = e.identity("fingerprint");
  job.key = result_key(job.task_source, job.candidate_source, job.evaluator);
  return job;
}

TEST(WorkerEvaluator, AJobsIdentityNamesItsEvaluatorsStream) {
  EXPECT_EQ(evaluator_tag(kGpu.identity("any settings")), kGpu.tag());
  EXPECT_NE(kCpu.tag(), kGpu.tag());
  EXPECT_NE(kCpu.tag(), (WorkerEvaluator{"cpu", "cpu", "2.11.0", "judge-2"}.tag()));
  EXPECT_TRUE(kCpu.judges(kCpu.identity("x")));
  EXPECT_FALSE(kCpu.judges(kGpu.identity("x")));
  EXPECT_EQ(worker_evaluator_from_json(to_json(kGpu)), kGpu);
}

TEST(WorkerEvaluator, AJobForAnotherEvaluatorIsLeftForItsWorkers) {
  test::TempDir dir("worker-evaluator");
  test::RedisServer server(dir.path() / "redis", "evaluator-password");
  RedisConnection redis(parse_redis_url(server.url()));
  const QueueLayout cpu_layout = QueueLayout{}.for_evaluator(kCpu.tag());
  const QueueJob gpu_job = job_for(kGpu);
  // Put on the CPU evaluator's stream by mistake (a hand-made or an older submitter's entry).
  ASSERT_EQ(JobQueue(redis, cpu_layout).submit(gpu_job), SubmitOutcome::queued);

  auto options = [](std::string name, const WorkerEvaluator& e) {
    WorkerOptions o;
    o.name = std::move(name);
    o.block = 100ms;
    o.evaluator = e;
    return o;
  };
  RedisConnection cpu_redis(parse_redis_url(server.url()));
  QueueWorker cpu_worker(cpu_redis, options("cpu-worker", kCpu), [](const QueueJob&) -> eval::Result {
    ADD_FAILURE() << "the CPU worker judged a job keyed for the GPU";
    return {};
  });
  EXPECT_EQ(cpu_worker.stream(), cpu_layout.stream());
  test::CapturedLog log;
  EXPECT_EQ(cpu_worker.step(), StepOutcome::forwarded);
  EXPECT_NE(log.str().find("moved to"), std::string::npos) << log.str();
  EXPECT_EQ(cpu_worker.step(), StepOutcome::idle);
  EXPECT_EQ(cpu_worker.stats().forwarded, 1);
  EXPECT_EQ(cpu_worker.stats().failed, 0);

  RedisConnection gpu_redis(parse_redis_url(server.url()));
  QueueWorker gpu_worker(gpu_redis, options("gpu-worker", kGpu), [](const QueueJob& j) {
    eval::Result r;
    r.task = j.task_id;
    r.verdict = eval::Verdict::correct;
    return r;
  });
  EXPECT_EQ(gpu_worker.step(), StepOutcome::evaluated);
  const auto record = JobQueue(redis, cpu_layout).result(gpu_job.key);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->worker, "gpu-worker");
  const QueueStatus status = read_status(redis, {});
  EXPECT_EQ(status.pending, 0);
  EXPECT_EQ(status.waiting, 0);
  ASSERT_EQ(status.workers.size(), 2u);
  EXPECT_EQ(status.workers[0].evaluator, kCpu);
  EXPECT_EQ(status.workers[0].forwarded, 1);
}

}  // namespace vinci::queue::worker_evaluator_test
