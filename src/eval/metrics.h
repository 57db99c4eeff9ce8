// Suite-level metrics over results: fast_p, correctness rate, geometric-mean speedup (design.md §3).
//
// Definitions used throughout this file:
// - A *task* is counted once, however many candidates were evaluated for it. Of a task's results, the best correct one
//   is kept: the correct result with the highest speedup for the chosen baseline; a correct result with a speedup beats
//   a correct one without. A task without a correct result (or without any result) is a failure.
// - fast_p = (1/N) * #{tasks whose best correct result has speedup > p} (strict), for p > 0; N is the number of tasks
//   the suite has at that level, so missing results count as failures.
// - fast_0 is the correctness rate: the share of the N tasks that have at least one correct result, whether or not it
//   has a speedup (a correct result whose baseline was not timed counts for fast_0 only).
// - A speedup that is not finite or not > 0 is treated as absent.
// - The geometric-mean speedup is over the tasks whose best correct result has a speedup (one value per task).
// - launch_bound counts the correct tasks whose best result carries the judge's flag launch_bound: its kernels kept
//   the GPU busy for less than half of the timed window, so its speedup compares the host's launch work more than
//   kernels (a larger --scale times the kernels).
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/result.h"
#include "eval/task.h"

namespace vinci::eval {

// Which timing a speedup is measured against: Result::speedup_eager or Result::speedup_compile.
enum class Baseline { eager, compile };

std::string_view to_string(Baseline b);             // "eager" | "compile"
Baseline baseline_from_string(std::string_view s);  // throws std::invalid_argument naming the value

// The thresholds fast_p is reported for.
inline constexpr std::array<double, 6> kFastP{0.0, 0.5, 0.8, 1.0, 1.5, 2.0};

// "fast_0", "fast_0.5", "fast_0.8", "fast_1", "fast_1.5", "fast_2", …
std::string fast_p_key(double p);

// The speedup of r against baseline b, or nullopt when it is absent, not finite or not > 0.
std::optional<double> speedup_of(const Result& r, Baseline b);

// One task of the suite, reduced to what the metrics need.
struct TaskOutcome {
  int level = 0;
  std::string task;
  int results = 0;                      // results seen for this task (all candidates)
  bool correct = false;                 // at least one correct result
  std::optional<double> speedup;        // speedup of the best correct result, if it has one
  bool launch_bound = false;            // the best correct result is flagged launch_bound
  std::map<std::string, int> by_class;  // result class -> number of this task's results
};

// One TaskOutcome per task, ordered by (level, task).
// tasks_per_level maps a level to the suite's task ids (Result::task) at that level. When it is non-empty it defines
// the tasks: every listed task appears (those without a result as failures), a result is placed at the level its task
// is listed under, and results for tasks that are not listed are left out (counted by `ignored`, when given). When
// it is empty, the tasks are the distinct (Result::level, Result::task) pairs of the results.
std::vector<TaskOutcome> task_outcomes(const std::vector<Result>& results,
                                       const std::map<int, std::vector<std::string>>& tasks_per_level,
                                       Baseline baseline, int* ignored = nullptr);

struct LevelSummary {
  int level = 0;                    // -1 for the overall row
  int tasks = 0;                    // N
  int results = 0;                  // results counted (all candidates)
  int missing = 0;                  // tasks without any result
  int correct = 0;                  // tasks with at least one correct result
  int with_speedup = 0;             // correct tasks whose best result has a speedup (the geomean's sample)
  int launch_bound = 0;             // correct tasks whose best result is flagged launch_bound
  double correctness_rate = 0;      // correct / tasks; 0 when tasks == 0
  std::map<double, double> fast_p;  // p (each of kFastP) -> fraction of the N tasks; 0 when tasks == 0
  std::optional<double> geomean_speedup;
  std::map<std::string, int> by_class;  // result class (to_string(Verdict)) -> number of results, all candidates
};

struct Summary {
  std::vector<LevelSummary> levels;  // ascending level
  LevelSummary overall;              // all levels together: N = total tasks
  std::string baseline;              // "eager" | "compile"
  int ignored_results = 0;           // results for tasks that tasks_per_level does not list
};

// What summarize's tasks_per_level wants, from a suite's tasks: level -> task ids, in suite order.
std::map<int, std::vector<std::string>> task_ids_by_level(const std::vector<Task>& tasks);

Summary summarize(const std::vector<Result>& results, const std::map<int, std::vector<std::string>>& tasks_per_level,
                  Baseline baseline = Baseline::eager);

// {"baseline":"eager","ignored_results":0,"levels":{"1":{...}},"overall":{...}}; each level object has tasks, results,
// missing, correct, with_speedup, launch_bound, correctness_rate, fast_0 … fast_2, geomean_speedup (null when absent)
// and by_class. For a level with no tasks, correctness_rate and the fast_p values are null.
nlohmann::json to_json(const LevelSummary& s);
nlohmann::json to_json(const Summary& s);

// A plain-text table for terminals: level, tasks, results, correct, fast_0 … fast_2 as percentages, geomean; below
// it, how many correct tasks were timed launch-bound, when any were.
std::string format_table(const Summary& s);

// The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on Code"): of n
// samples of a task, c correct, the chance that k drawn without replacement hold a correct one,
// 1 - C(n-c, k) / C(n, k). It is computed as 1 - prod_{i=n-c+1..n} (1 - k/i), which needs no binomial (those
// overflow doubles for a few hundred samples). 1 when n - c < k: every draw of k holds a correct sample.
// Throws std::invalid_argument unless 0 <= c <= n and 1 <= k <= n.
double pass_at_k(int n, int c, int k);

// Reads a results.jsonl file, one Result per non-blank line (result_from_json). A torn last line (no newline: a
// run killed mid-write) is skipped with a warning (core::read_jsonl_lines).
// Throws std::invalid_argument "<file>:<line>: …" with the JSON error or the malformed field for a bad line, and
// std::runtime_error naming the file when it cannot be read.
std::vector<Result> read_results_jsonl(const std::filesystem::path& path);

}  // namespace vinci::eval
