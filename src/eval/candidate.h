// Candidates and how they are matched to tasks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "eval/task.h"

namespace vinci::eval {

struct Candidate {
  std::filesystem::path file;
  std::string source;
  std::string hash;                        // content hash of source
  std::optional<std::string> task_header;  // from a "# vinci-task: <id>" line
  // Corpus labels (tests/hacks/README.md): "# vinci-expect: class/reason", "# vinci-devices: cpu,cuda".
  // An expectation is one or more alternatives separated by '|', each "class/reason" or "class/"
  // (any reason): a cache hack may be caught by the check that happens to meet it first.
  std::optional<std::string> expect;
  // "# vinci-expect-speedup-below: X": a correct verdict must also be slower than X times eager (a
  // timing lie may end correct, but never credited with the speed it pretends).
  std::optional<double> speedup_below;
  std::vector<std::string> devices;  // empty: any device
  bool runs_on(const std::string& device) const;
  // Whether a verdict meets the expectation (true when there is none); speedup is a correct
  // result's speedup over eager.
  bool expectation_met(const std::string& verdict, const std::string& reason,
                       std::optional<double> speedup = std::nullopt) const;
};

Candidate load_candidate(const std::filesystem::path& file);

struct Pairing {
  std::vector<std::pair<Task, Candidate>> pairs;
  std::vector<std::string> unmatched;  // candidate files no task claims, with why
};

// Matches every .py file under dir (recursively) to a task, as KernelBench's generation folders
// do, trying in order: a "# vinci-task:" header; the path relative to dir equal to a task id
// (levelN/<number>_<Name>.py); the file name equal to exactly one task's file name; KernelBench's
// generated names, level_<L>_problem_<N>[_sample_<S>][_kernel].py.
Pairing match_candidates(const Suite& suite, const std::filesystem::path& dir);

}  // namespace vinci::eval
