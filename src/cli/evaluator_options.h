// The evaluator's command-line settings, shared by every command that judges kernels.
//
// The evaluator's command-line settings that `vinci eval` and every command whose kernels are judged
// (optimize, bench-model, sft-data, train rl) share: where and how big, how long, what is cached.
#pragma once

#include <CLI/CLI.hpp>

#include "eval/config.h"

namespace vinci::cli {

struct EvaluatorOptions {
  eval::EvalConfig config;
  int compile_timeout_s = 900, run_timeout_s = 300;
  eval::EvalConfig resolved() const;  // the config with the timeouts set
};

// --device, --scale, --cache-dir, --trials, --time-budget, --no-compile-baseline, --torch-ops,
// --compile-timeout, --compile-memory, --compile-cpu and --run-timeout.
void add_evaluator_options(CLI::App& app, EvaluatorOptions& options);

// The host's part alone: --device, --cache-dir and the limits (--compile-timeout, --compile-memory,
// --compile-cpu, --run-timeout). A queue worker takes these; what is measured comes with each job.
void add_host_evaluator_options(CLI::App& app, EvaluatorOptions& options);

}  // namespace vinci::cli
