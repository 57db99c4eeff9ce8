// The queue's side of the evaluations seam (cli/evaluations.h).
//
// The queue's side of the evaluations seam (cli/evaluations.h): jobs go to the workers of a Redis
// queue through queue/queue_submitter.h. Built where hiredis is; queue_missing.cpp stands in elsewhere.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/evaluations.h"
#include "core/setup_error.h"
#include "queue/queue_submitter.h"
#include "queue/redis_url.h"

namespace vinci::cli {

namespace {

class QueueEvaluations final : public Evaluations {
 public:
  QueueEvaluations(eval::EvalConfig config, queue::RedisUrl url)
      : config_(std::move(config)), redis_(std::move(url)), submitter_(redis_, config_) {}
  std::vector<eval::Result> run(const std::vector<eval::Job>& jobs,
                                const std::function<void(const eval::Result&)>& on_result) override {
    return submitter_.run(jobs, on_result);
  }
  void stop_at(std::optional<std::chrono::steady_clock::time_point> deadline,
               const std::atomic<bool>* interrupt) override {
    submitter_.stop_at(deadline, interrupt);
  }
  std::string device() const override { return submitter_.evaluator().device_name; }
  std::string device_kind() const override { return submitter_.evaluator().device_kind; }
  std::string sandbox() override { return submitter_.sandbox(); }
  eval::PoolStats stats() const override {
    const auto s = submitter_.stats();
    eval::PoolStats p;
    p.results = s.results;
    p.result_cache_hits = s.from_store;
    return p;
  }
  std::string describe() const override {
    return fmt::format("the workers of queue {} (evaluator {}, stream tag {})", redis_.url().redacted(),
                       submitter_.evaluator().describe(), submitter_.evaluator().tag());
  }

 private:
  eval::EvalConfig config_;
  queue::RedisConnection redis_;
  queue::QueueSubmitter submitter_;
};

}  // namespace

std::unique_ptr<Evaluations> open_queue_evaluations(const eval::EvalConfig& config, const std::string& queue_url) {
  queue::RedisUrl url;
  try {
    url = queue::parse_redis_url(queue_url);
  } catch (const std::invalid_argument& e) {
    throw core::SetupError(fmt::format("--queue: {}", e.what()));
  }
  eval::EvalConfig c = config;
  c.resolve();  // the settings jobs carry are the ones a local pool would judge under
  return std::make_unique<QueueEvaluations>(std::move(c), std::move(url));
}

}  // namespace vinci::cli
