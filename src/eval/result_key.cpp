#include "eval/result_key.h"

#include "core/hash.h"

namespace vinci::eval {

std::string result_key(const std::string& task_source, const std::string& candidate_source,
                       const EvaluatorIdentity& evaluator) {
  return core::content_hash({task_source, candidate_source, evaluator.config_fingerprint, evaluator.device_name,
                             evaluator.torch_version, evaluator.evaluator_version, "result-v3"});
}

}  // namespace vinci::eval
