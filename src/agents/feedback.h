// The evaluator's verdict as the policy reads it on its next turn.
//
// The evaluator's verdict as the policy reads it on its next turn: what failed and where (the build
// log cut down to its errors, the first mismatch), or how fast it ran and how much of the time its
// own kernels took.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "eval/result.h"

namespace vinci::agents {

// The lines of a compiler or Python log that say what went wrong (errors with their next lines of
// context, the last traceback frame), at most max_chars; the log's tail when no line names an error.
std::string trim_build_log(std::string_view log, size_t max_chars);

// Where the profiled forward call's GPU time went, a line per kernel; empty without a profile (CPU).
std::string profile_summary(const std::vector<eval::KernelTime>& kernels);

// The multi-line feedback for one evaluated kernel.
std::string describe_result(const eval::Result& result, size_t max_log_chars = 3000);

// One line for memories, reports and progress: "correct, 2.31x eager (coverage 97%)",
// "compile_error/build_failed".
std::string outcome_line(const eval::Result& result);

// The speedup an attempt is ranked by: speedup over eager for correct results, 0 otherwise.
double attempt_speedup(const eval::Result& result);

}  // namespace vinci::agents
