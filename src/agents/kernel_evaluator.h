// What the agents need of the evaluator: results for a batch of (task, candidate file) jobs. The
// pool is the real one; tests and replays put their own behind the same call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "eval/pool.h"

namespace vinci::agents {

class KernelEvaluator {
 public:
  virtual ~KernelEvaluator() = default;
  // One result per job, in order.
  virtual std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) = 0;
  virtual std::string device() const = 0;
};

// The evaluator pool behind the agents' interface; on_result sees each result as it lands (progress).
class PoolEvaluator final : public KernelEvaluator {
 public:
  explicit PoolEvaluator(eval::EvaluatorPool& pool, std::function<void(const eval::Result&)> on_result = {})
      : pool_(pool), on_result_(std::move(on_result)) {}
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override {
    return pool_.run(jobs, on_result_);
  }
  std::string device() const override { return pool_.device_name(); }

 private:
  eval::EvaluatorPool& pool_;
  std::function<void(const eval::Result&)> on_result_;
};

}  // namespace vinci::agents
