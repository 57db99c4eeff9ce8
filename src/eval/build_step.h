// The build step: static checks and extension compilation for one candidate, in a disposable
// sandboxed process, many in parallel. Its output decides whether the candidate reaches a GPU.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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

// candidate_file is the content-addressed copy the worker will import.
BuildOutcome run_build(const std::filesystem::path& candidate_file, const Task& task, const EvalConfig& config,
                       const std::filesystem::path& log);

}  // namespace vinci::eval
