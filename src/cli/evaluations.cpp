#include "cli/evaluations.h"

#include <fmt/format.h>

namespace vinci::cli {

namespace {

class LocalEvaluations final : public Evaluations {
 public:
  explicit LocalEvaluations(const eval::EvalConfig& config) : pool_(config) {}
  std::vector<eval::Result> run(const std::vector<eval::Job>& jobs,
                                const std::function<void(const eval::Result&)>& on_result) override {
    return pool_.run(jobs, on_result);
  }
  void stop_at(std::optional<std::chrono::steady_clock::time_point> deadline,
               const std::atomic<bool>* interrupt) override {
    pool_.stop_at(deadline, interrupt);
  }
  std::string device() const override { return pool_.device_name(); }
  std::string device_kind() const override { return pool_.device_kind(); }
  std::string sandbox() override { return pool_.sandbox(); }
  eval::PoolStats stats() const override { return pool_.stats(); }
  std::string describe() const override {
    return fmt::format("{} ({} worker{}), cache {}", pool_.device_name(), pool_.workers(),
                       pool_.workers() == 1 ? "" : "s",
                       pool_.config().use_cache ? pool_.config().cache_dir.string() : "off");
  }

 private:
  eval::EvaluatorPool pool_;
};

}  // namespace

std::unique_ptr<Evaluations> open_evaluations(const eval::EvalConfig& config, const std::string& queue_url) {
  if (!queue_url.empty()) return open_queue_evaluations(config, queue_url);
  return std::make_unique<LocalEvaluations>(config);
}

void add_queue_option(CLI::App& app, std::string& queue_url) {
  app.add_option("--queue", queue_url,
                 "submit the evaluations to the workers of this Redis queue, redis://[user:password@]HOST:PORT[/DB], "
                 "instead of evaluating here (`vinci worker`, docs/distributed.md): the results and their order are "
                 "a local run's; the workers' own limits (timeouts, build memory) apply, and a result already in "
                 "the queue's store is reused");
}

}  // namespace vinci::cli
