// The build step: static checks and extension compilation for one candidate, in a disposable
// sandboxed process, many in parallel. Its output decides whether the candidate reaches a GPU.
//
// Each BuildStep owns a build server (python -m vinci_worker build-server) that imports torch
// once and forks one child per candidate, because starting Python with torch costs more than
// building a candidate whose extension is already cached. The server is spawned with the
// sandbox's limits and network isolation, which every child inherits.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/process.h"
#include "eval/candidate.h"
#include "eval/config.h"
#include "eval/result.h"
#include "eval/task.h"

namespace vinci::eval {

struct BuildOutcome {
  bool ok = false;
  nlohmann::json static_report;  // kernel_names, findings, …
  // When not ok: the classified result fields.
  Verdict verdict = Verdict::compile_error;
  std::string reason, message;
  double seconds = 0;
};

// Not thread-safe: one BuildStep per building thread.
class BuildStep {
 public:
  // `id` tells this step's server apart from its siblings' in scratch and log names.
  BuildStep(const EvalConfig& config, int id);
  ~BuildStep();
  BuildStep(const BuildStep&) = delete;
  BuildStep& operator=(const BuildStep&) = delete;

  // candidate_file is the content-addressed copy the worker will import. The server is started
  // on first use, and again after it dies or a build overruns config.compile_timeout.
  BuildOutcome run(const std::filesystem::path& candidate_file, const Task& task, const std::filesystem::path& log);

 private:
  void start();
  void stop();

  const EvalConfig& config_;
  std::filesystem::path scratch_;  // the server's working directory
  std::filesystem::path log_;
  std::optional<core::Process> server_;
};

}  // namespace vinci::eval
