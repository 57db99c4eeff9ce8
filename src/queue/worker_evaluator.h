// The evaluator a worker brings to the queue: device, torch and the judge's version.
//
// The evaluator a worker brings to the queue: the host's part of a job's EvaluatorIdentity (its
// device, torch and the judge's version); the protocol's settings come with each job. Each evaluator
// has a stream of its own (QueueLayout::evaluator, named by tag()), which its workers announce in
// their heartbeats and submitters read, so a job only reaches workers that judge it as its key says.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/result_key.h"

namespace vinci::queue {

struct WorkerEvaluator {
  std::string device_kind;  // cpu | cuda: what a submitter's --device picks
  std::string device_name;  // "cpu", or the GPU's model
  std::string torch_version;
  std::string evaluator_version;

  // The stream's name: a hash of what the evaluator is, so a job's own identity gives it too.
  std::string tag() const;
  // Whether a job keyed for this identity is this evaluator's to judge (its settings aside).
  bool judges(const eval::EvaluatorIdentity& identity) const;
  eval::EvaluatorIdentity identity(std::string config_fingerprint) const;
  std::string describe() const;  // for logs and the status table
  bool operator==(const WorkerEvaluator&) const = default;
};

// The tag of the evaluator a job is keyed for: where that job's workers read.
std::string evaluator_tag(const eval::EvaluatorIdentity& identity);

nlohmann::json to_json(const WorkerEvaluator& evaluator);
WorkerEvaluator worker_evaluator_from_json(const nlohmann::json& j);  // throws std::invalid_argument

}  // namespace vinci::queue
