#include "queue/worker_evaluator.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/hash.h"

namespace vinci::queue {

namespace {

std::string tag_of(const std::string& device_name, const std::string& torch_version,
                   const std::string& evaluator_version) {
  // 64 bits: stream names stay short, and evaluators in one queue are a handful.
  return core::content_hash({device_name, torch_version, evaluator_version, "evaluator-v1"}).substr(0, 16);
}

std::string evaluator_field(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name) || !j[name].is_string())
    throw std::invalid_argument(fmt::format("worker evaluator: field '{}' is missing or not a string", name));
  return j[name].get<std::string>();
}

}  // namespace

std::string WorkerEvaluator::tag() const { return tag_of(device_name, torch_version, evaluator_version); }

std::string evaluator_tag(const eval::EvaluatorIdentity& identity) {
  return tag_of(identity.device_name, identity.torch_version, identity.evaluator_version);
}

bool WorkerEvaluator::judges(const eval::EvaluatorIdentity& identity) const {
  return identity.device_name == device_name && identity.torch_version == torch_version &&
         identity.evaluator_version == evaluator_version;
}

eval::EvaluatorIdentity WorkerEvaluator::identity(std::string config_fingerprint) const {
  return {std::move(config_fingerprint), device_name, torch_version, evaluator_version};
}

std::string WorkerEvaluator::describe() const {
  return fmt::format("{} ({}), torch {}, judge {}", device_kind, device_name, torch_version,
                     evaluator_version.substr(0, 12));
}

nlohmann::json to_json(const WorkerEvaluator& e) {
  return {{"device_kind", e.device_kind},
          {"device_name", e.device_name},
          {"torch_version", e.torch_version},
          {"evaluator_version", e.evaluator_version}};
}

WorkerEvaluator worker_evaluator_from_json(const nlohmann::json& j) {
  return {evaluator_field(j, "device_kind"), evaluator_field(j, "device_name"), evaluator_field(j, "torch_version"),
          evaluator_field(j, "evaluator_version")};
}

}  // namespace vinci::queue
