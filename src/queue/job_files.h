// A queued job as the local judge takes it: its task and candidate written into a folder.
//
// A queued job as the local judge takes it: its task and candidate written into a folder of its own,
// under the task's id and the candidate's file name as the submitter had them, so the judge's result
// names them alike. The folder goes when the evaluation is over.
#pragma once

#include <filesystem>

#include "eval/pool.h"
#include "queue/job_protocol.h"

namespace vinci::queue {

class JobFiles {
 public:
  // Writes root/<key>/. Throws std::invalid_argument when the task id or the candidate's name would
  // leave that folder or give another id, which no submitter of ours sends.
  JobFiles(const std::filesystem::path& root, const QueueJob& job);
  ~JobFiles();
  JobFiles(const JobFiles&) = delete;
  JobFiles& operator=(const JobFiles&) = delete;

  const eval::Job& job() const { return job_; }

 private:
  std::filesystem::path dir_;
  eval::Job job_;
};

}  // namespace vinci::queue
