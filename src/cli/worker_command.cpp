// vinci worker --queue URL: serves the queue's evaluations on this host.
//
// vinci worker --queue URL: serves the queue's evaluations on this host, one consumer per GPU (or CPU
// slot), each judging with the local judge of `vinci eval`. --status prints the queue's state instead.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/evaluator_options.h"
#include "cli/worker_slot.h"
#include "core/setup_error.h"
#include "eval/environment.h"
#include "queue/queue_status.h"
#include "queue/queue_worker.h"
#include "queue/redis_url.h"

namespace vinci::cli {

namespace {

struct WorkerCommandOptions {
  std::string queue, name;
  bool status = false, json = false;
  std::vector<int> gpus;
  int slots = 0;  // 0: one (CPU); on cuda one per GPU
  double visibility_timeout_s = 60;
  int max_deliveries = 3;
  int hold_ahead = -1;  // -1: one on a GPU (its build overlaps the current job's timing), none on the CPU
  EvaluatorOptions eval;
};

// The first SIGINT or SIGTERM lets the jobs in hand finish, the second releases them at once.
std::atomic<bool> g_worker_stopping{false}, g_worker_releasing{false};

void on_worker_signal(int) {
  if (g_worker_stopping.exchange(true)) g_worker_releasing = true;
}

queue::RedisUrl worker_queue_url(const std::string& text) {
  try {
    return queue::parse_redis_url(text);
  } catch (const std::invalid_argument& e) {
    throw core::SetupError(fmt::format("--queue: {}", e.what()));
  }
}

int print_queue_status(const WorkerCommandOptions& o) {
  queue::RedisConnection redis(worker_queue_url(o.queue));
  const queue::QueueStatus status = queue::read_status(redis, {});
  if (o.json)
    fmt::print("{}\n", queue::to_json(status).dump());
  else
    fmt::print("{}", queue::format_status(status, redis.url().redacted()));
  return 0;
}

// The host's slots as configs: one per GPU (each timing on its own through gpu_share_index), or
// o.slots on the CPU.
std::vector<eval::EvalConfig> slot_configs(const WorkerCommandOptions& o) {
  eval::EvalConfig host = o.eval.resolved();
  host.resolve();
  if (!o.gpus.empty()) {
    if (host.device == "cpu") throw core::SetupError("--gpus picks GPUs for --device cuda, not cpu");
    std::vector<std::string> ids;
    for (int g : o.gpus) ids.push_back(std::to_string(g));
    // Before any thread or judge starts: every judge and the environment probe read it.
    ::setenv("CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(ids, ",")).c_str(), 1);
    host.device = "cuda";
  }
  const eval::Environment env = eval::probe_environment(host.python);
  if (host.device == "auto") host.device = env.gpus.empty() ? "cpu" : "cuda";
  std::vector<eval::EvalConfig> slots;
  if (host.device == "cuda") {
    if (o.slots > 0)
      throw core::SetupError("--slots counts CPU slots; on cuda there is one per GPU (pick them with --gpus)");
    if (env.gpus.empty())
      throw core::SetupError(
          "--device cuda: no NVIDIA GPU is visible (CUDA_VISIBLE_DEVICES, --gpus); use --device cpu");
    for (size_t i = 0; i < env.gpus.size(); ++i) {
      eval::EvalConfig c = host;
      c.gpu_share_index = static_cast<int>(i);
      c.gpu_share_count = static_cast<int>(env.gpus.size());
      slots.push_back(c);
    }
  } else {
    slots.assign(static_cast<size_t>(std::max(1, o.slots)), host);
  }
  return slots;
}

int serve_queue(const WorkerCommandOptions& o) {
  const queue::RedisUrl url = worker_queue_url(o.queue);
  { queue::RedisConnection check(url); }  // refused credentials stop the worker before its judges start
  const std::vector<eval::EvalConfig> configs = slot_configs(o);
  const std::string base = o.name.empty() ? queue::default_worker_name() : o.name;
  std::vector<std::unique_ptr<WorkerSlot>> slots;
  std::vector<std::string> names;
  for (size_t i = 0; i < configs.size(); ++i) {
    names.push_back(fmt::format("{}/{}{}", base, configs[i].device == "cuda" ? "gpu" : "cpu", i));
    slots.push_back(std::make_unique<WorkerSlot>(configs[i], names.back(), &g_worker_releasing));
  }
  const queue::WorkerEvaluator evaluator = slots.front()->evaluator();
  const std::string sandbox = slots.front()->sandbox();
  std::signal(SIGINT, on_worker_signal);
  std::signal(SIGTERM, on_worker_signal);
  spdlog::info("serving {} as {} ({}), evaluator {}, stream tag {}, sandbox {}", url.redacted(), fmt::join(names, ", "),
               names.size() == 1 ? "one slot" : fmt::format("{} slots", names.size()), evaluator.describe(),
               evaluator.tag(), sandbox);

  std::mutex error_mu;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < slots.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        queue::RedisConnection redis(url);
        queue::WorkerOptions options;
        options.name = names[i];
        options.visibility_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.visibility_timeout_s * 1000));
        options.max_deliveries = o.max_deliveries;
        options.evaluator = evaluator;
        options.sandbox = sandbox;
        options.hold_ahead = static_cast<size_t>(o.hold_ahead >= 0 ? o.hold_ahead : configs[i].device == "cuda");
        WorkerSlot& slot = *slots[i];
        queue::QueueWorker worker(
            redis, options, [&](const queue::QueueJob& job) { return slot.evaluate(job); },
            [&](const queue::QueueJob& job) { slot.prepare(job); });
        while (!g_worker_stopping) worker.step();
        worker.sign_off();
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!error) error = std::current_exception();
        g_worker_stopping = true;  // one slot that cannot go on stops the host's others, cleanly
      }
    });
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  spdlog::info("stopped: {}", g_worker_releasing ? "the jobs in hand were released" : "no job was left in hand");
  return 0;
}

}  // namespace

Action add_worker_command(CLI::App& app) {
  auto o = std::make_shared<WorkerCommandOptions>();
  app.footer(
      "One command per evaluating host: `vinci worker --queue URL --device cuda` serves every visible GPU (or "
      "--gpus), one consumer each; --device cpu serves --slots CPU slots. Each job is judged under the settings its "
      "submitter chose (scale, trials, tolerances, protocol, torch ops: what its key names) and this host's limits. "
      "The worker announces its evaluator (device, torch, the judge's version) and reads only that evaluator's "
      "stream. SIGINT or SIGTERM: the jobs in hand are finished, then it stops; a second one releases them at "
      "once for another worker. A wrong password or an unreachable server stops it at the start (exit code 4). "
      "docs/distributed.md has the server's setup.");
  app.add_option("--queue", o->queue, "the Redis server: redis://[user:password@]HOST:PORT[/DB]")->required();
  app.add_flag("--status", o->status,
               "print the queue's state instead of serving: live workers and their evaluators, jobs waiting and "
               "pending per stream, results in the last minute, failures");
  app.add_flag("--json", o->json, "with --status: one JSON object instead of a table");
  app.add_option("--gpus", o->gpus,
                 "with --device cuda: serve these GPUs (CUDA ids, e.g. 0,1); default every visible one")
      ->delimiter(',');
  app.add_option("--slots", o->slots, "with --device cpu: how many CPU jobs to judge at once (default 1)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--name", o->name, "the consumers' name before /gpuN or /cpuN (default HOST:PID); unique per worker");
  app.add_option("--visibility-timeout", o->visibility_timeout_s,
                 "seconds a dead worker's job waits before another worker takes it over")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option(
         "--max-deliveries", o->max_deliveries,
         "a job handed out this many times without a result (its workers died) ends as runtime_error/worker_lost")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--hold-ahead", o->hold_ahead,
                 "jobs each slot takes ahead of the one it judges, built meanwhile (default 1 on a GPU, where the "
                 "build step imports and compiles; 0 on the CPU, where the runner does)")
      ->check(CLI::Range(0, 8));
  add_host_evaluator_options(app, o->eval);
  return [o] { return o->status ? print_queue_status(*o) : serve_queue(*o); };
}

}  // namespace vinci::cli
