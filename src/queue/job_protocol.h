// What travels through the queue: a job and the record of its result.
//
// What travels through the queue: a job (one candidate on one task, under one evaluator) and the
// record of its result. These structs are the only form the rest of vinci sees; the stream's fields
// and the result store's JSON are made and read here alone, and a fixture pins them
// (tests/fixtures/queue/), so workers and submitters of one format version understand each other.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/result.h"
#include "eval/result_key.h"

namespace vinci::queue {

// Stream entries carry this in their `format` field; any other value is a foreign entry.
inline constexpr const char* kJobFormat = "vinci-job-v1";

// What decides a result besides the two sources: the evaluator that judges them (eval/result_key.h).
using eval::EvaluatorIdentity;
using eval::result_key;

struct QueueJob {
  std::string key;      // result_key(task_source, candidate_source, evaluator)
  std::string task_id;  // suite-relative, e.g. "level1/1_Matmul"
  std::string task_source;
  std::string candidate_name;  // the candidate's path as the submitter gave it
  std::string candidate_source;
  EvaluatorIdentity evaluator;
  nlohmann::json settings = nlohmann::json::object();  // the EvalConfig the worker judges under
};

struct ResultRecord {
  std::string key;
  std::string worker;  // the consumer that wrote it
  int deliveries = 1;  // how often the job was handed out before this result
  eval::Result result;
};

// Stream fields of an entry, in XADD's order.
std::map<std::string, std::string> to_stream_fields(const QueueJob& job);
// Throws std::invalid_argument naming what is wrong: a missing or foreign `format`, unreadable JSON,
// a missing field, or a key that is not the one its own sources and evaluator give.
QueueJob job_from_stream_fields(const std::map<std::string, std::string>& fields);

nlohmann::json to_json(const QueueJob& job);
QueueJob job_from_json(const nlohmann::json& j);  // throws std::invalid_argument
nlohmann::json to_json(const ResultRecord& record);
ResultRecord result_record_from_json(const nlohmann::json& j);  // throws std::invalid_argument

}  // namespace vinci::queue
