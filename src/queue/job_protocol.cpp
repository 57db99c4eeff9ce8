#include "queue/job_protocol.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::queue {

namespace {

std::string required_string(const nlohmann::json& j, const char* field, const char* what) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_string())
    throw std::invalid_argument(fmt::format("{}: field '{}' is missing or not a string", what, field));
  return j[field].get<std::string>();
}

}  // namespace

nlohmann::json to_json(const QueueJob& job) {
  return {{"key", job.key},
          {"task_id", job.task_id},
          {"task_source", job.task_source},
          {"candidate_name", job.candidate_name},
          {"candidate_source", job.candidate_source},
          {"evaluator",
           {{"config_fingerprint", job.evaluator.config_fingerprint},
            {"device_name", job.evaluator.device_name},
            {"torch_version", job.evaluator.torch_version},
            {"evaluator_version", job.evaluator.evaluator_version}}},
          {"settings", job.settings}};
}

QueueJob job_from_json(const nlohmann::json& j) {
  constexpr const char* what = "queue job";
  QueueJob job;
  job.key = required_string(j, "key", what);
  job.task_id = required_string(j, "task_id", what);
  job.task_source = required_string(j, "task_source", what);
  job.candidate_name = required_string(j, "candidate_name", what);
  job.candidate_source = required_string(j, "candidate_source", what);
  if (!j.contains("evaluator")) throw std::invalid_argument("queue job: field 'evaluator' is missing");
  const auto& e = j["evaluator"];
  constexpr const char* ewhat = "queue job's evaluator";
  job.evaluator.config_fingerprint = required_string(e, "config_fingerprint", ewhat);
  job.evaluator.device_name = required_string(e, "device_name", ewhat);
  job.evaluator.torch_version = required_string(e, "torch_version", ewhat);
  job.evaluator.evaluator_version = required_string(e, "evaluator_version", ewhat);
  if (!j.contains("settings") || !j["settings"].is_object())
    throw std::invalid_argument("queue job: field 'settings' is missing or not an object");
  job.settings = j["settings"];
  return job;
}

std::map<std::string, std::string> to_stream_fields(const QueueJob& job) {
  return {{"format", kJobFormat}, {"job", to_json(job).dump()}};
}

QueueJob job_from_stream_fields(const std::map<std::string, std::string>& fields) {
  const auto format = fields.find("format");
  if (format == fields.end()) throw std::invalid_argument("stream entry has no 'format' field: not a vinci job");
  if (format->second != kJobFormat)
    throw std::invalid_argument(
        fmt::format("stream entry has format '{}', this worker reads '{}'", format->second, kJobFormat));
  const auto body = fields.find("job");
  if (body == fields.end()) throw std::invalid_argument("stream entry has no 'job' field");
  const nlohmann::json j = nlohmann::json::parse(body->second, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw std::invalid_argument("stream entry's 'job' field is not JSON");
  QueueJob job = job_from_json(j);
  // A key that its own contents do not give would file a result under another job's name.
  const std::string expected = result_key(job.task_source, job.candidate_source, job.evaluator);
  if (job.key != expected)
    throw std::invalid_argument(fmt::format("stream entry's key {} is not its contents' key {}", job.key, expected));
  return job;
}

nlohmann::json to_json(const ResultRecord& record) {
  return {{"key", record.key},
          {"worker", record.worker},
          {"deliveries", record.deliveries},
          {"result", eval::to_json(record.result)}};
}

ResultRecord result_record_from_json(const nlohmann::json& j) {
  constexpr const char* what = "queue result";
  ResultRecord r;
  r.key = required_string(j, "key", what);
  r.worker = required_string(j, "worker", what);
  if (!j.contains("deliveries") || !j["deliveries"].is_number_integer())
    throw std::invalid_argument("queue result: field 'deliveries' is missing or not an integer");
  r.deliveries = j["deliveries"].get<int>();
  if (!j.contains("result")) throw std::invalid_argument("queue result: field 'result' is missing");
  r.result = eval::result_from_json(j["result"]);
  return r;
}

}  // namespace vinci::queue
