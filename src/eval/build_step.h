// The build step: static checks and extension compilation for one candidate, many in parallel.
// Its output decides whether the candidate reaches a device.
//
// Each BuildStep owns a build server (python -m vinci_worker build-server, trusted) that imports
// each candidate in a sandboxed process of its own and compiles its load_inline extensions, each
// in a sandbox too, into the extension cache keyed by their arguments.
#pragma once

#include <filesystem>
#include <string>

#include "eval/candidate.h"
#include "eval/config.h"
#include "eval/json_lines_child.h"
#include "eval/judge_protocol.h"
#include "eval/result.h"
#include "eval/task.h"

namespace vinci::eval {

// What building a candidate came to: the build server's report, or the step's own classification
// when the server could not answer (build_not_started, build_crashed, compile_timeout). Its seconds
// are the step's wall time, the wait for a server included.
using BuildOutcome = BuildReply;

// Not thread-safe: one BuildStep per building thread.
class BuildStep {
 public:
  // `id` tells this step's server apart from its siblings' in scratch and log names. A static_only
  // step runs the static checks and leaves the import (and its compiles) to the candidate's runner.
  BuildStep(const EvalConfig& config, int id, bool static_only = false);
  BuildStep(const BuildStep&) = delete;
  BuildStep& operator=(const BuildStep&) = delete;

  // candidate_file is the content-addressed copy the worker will import. The server is started
  // on first use, and again after it dies or a build overruns config.compile_timeout.
  BuildOutcome run(const std::filesystem::path& candidate_file, const Task& task, const std::filesystem::path& log);
  // Kills the server from another thread (a build in flight then ends as build_crashed).
  void kill_async() const;

 private:
  void start();
  BuildRequest request(const std::filesystem::path& candidate_file, const Task& task,
                       const std::filesystem::path& log) const;

  const EvalConfig& config_;
  bool static_only_;
  std::filesystem::path log_;
  JsonLinesChild server_;
};

}  // namespace vinci::eval
