// Queue jobs for the queue tests: numbered ("c<n>.py"), distinct by their candidate's source, keyed
// under one evaluator, and the result a scripted judge gives them.
#pragma once

#include <fmt/format.h>

#include <string>

#include "eval/result.h"
#include "queue/job_protocol.h"

namespace vinci::test {

inline eval::EvaluatorIdentity queue_test_evaluator() {
  return {"fingerprint-1", "cpu (test)", "2.11.0", "evaluator-1"};
}

inline queue::QueueJob numbered_job(int n) {
  queue::QueueJob job;
  job.task_id = "level1/19_ReLU";
  job.task_source = "class Model: pass\n";
  job.candidate_name = fmt::format("c{}.py", n);
  job.candidate_source = fmt::format("# candidate {}\nclass ModelNew: pass\n", n);
  job.evaluator = queue_test_evaluator();
  job.key = queue::result_key(job.task_source, job.candidate_source, job.evaluator);
  return job;
}

// n of numbered_job(n).
inline int job_number(const queue::QueueJob& job) { return std::stoi(job.candidate_name.substr(1)); }

inline eval::Result correct_result(const queue::QueueJob& job) {
  eval::Result r;
  r.task = job.task_id;
  r.candidate = job.candidate_name;
  r.verdict = eval::Verdict::correct;
  return r;
}

}  // namespace vinci::test
