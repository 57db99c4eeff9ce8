#include "queue/job_files.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"
#include "eval/candidate.h"
#include "eval/task.h"
#include "queue/job_settings.h"

namespace vinci::queue {

namespace fs = std::filesystem;

namespace {

bool plain_relative(const fs::path& p) {
  if (p.empty() || p.is_absolute()) return false;
  for (const auto& part : p)
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

}  // namespace

JobFiles::JobFiles(const fs::path& root, const QueueJob& job) : dir_(root / job.key) {
  const fs::path task_path = fs::path(job.task_id + ".py");
  const fs::path candidate_name = fs::path(job.candidate_name).filename();
  if (!plain_relative(task_path))
    throw std::invalid_argument(fmt::format("queue job {}: task id '{}' is not a relative path", job.key, job.task_id));
  if (!plain_relative(candidate_name))
    throw std::invalid_argument(
        fmt::format("queue job {}: candidate name '{}' has no file name", job.key, job.candidate_name));
  fs::remove_all(dir_);  // a job a killed worker had begun here
  const fs::path task_file = dir_ / "tasks" / task_path;
  const fs::path candidate_file = dir_ / "candidate" / candidate_name;
  core::write_file_atomic(task_file, job.task_source);
  core::write_file_atomic(candidate_file, job.candidate_source);
  job_.task = eval::task_from_file(task_file);
  if (job_.task.id != job.task_id)
    throw std::invalid_argument(
        fmt::format("queue job {}: task id '{}' reads back as '{}' (not levelN/<number>_<Name>)", job.key, job.task_id,
                    job_.task.id));
  job_.candidate = eval::load_candidate(candidate_file);
  job_.fresh = is_fresh(job.settings);
}

JobFiles::~JobFiles() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace vinci::queue
