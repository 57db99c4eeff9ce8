// What a result is cached and queued under: the two sources and the evaluator that judges them. The
// pool's cache and the Redis queue (queue/job_protocol.h) key by this one function, so a result
// answered through the queue is the one a local run would find.
#pragma once

#include <string>

namespace vinci::eval {

struct EvaluatorIdentity {
  std::string config_fingerprint;  // EvalConfig::fingerprint(): the protocol and its settings
  std::string device_name;         // e.g. "NVIDIA H100 80GB HBM3", or "cpu"
  std::string torch_version;
  std::string evaluator_version;  // a hash of the worker's Python sources
};

std::string result_key(const std::string& task_source, const std::string& candidate_source,
                       const EvaluatorIdentity& evaluator);

}  // namespace vinci::eval
