// `vinci bench-model`: a backbone over a task suite, scored by pass@k and fast_p.
//
// `vinci bench-model`: a backbone over a task suite under the KernelBench protocol, the numbers
// papers report for a model: pass@k and fast_p. Each task gets `samples` independent rollouts,
// without skills unless a library is given (then the selection agent picks each sample's skills,
// as daVinci-kernel evaluates with skill injection); with turns > 1 each is refined serially with the evaluator's
// feedback, as the policy agent does in `vinci optimize`. Tasks run in chunks of batch_tasks: every turn of a chunk is
// one batched generation and one batched evaluation over all its tasks' samples.
//
// What the run leaves in its output folder (write_bench_outputs):
//   results.jsonl   every evaluated attempt as an eval::Result line (vinci report, read_results_jsonl)
//   attempts.jsonl  every answer: task, sample, turn, file, parse failure, result class, speedup
//   episodes.jsonl  one episode per task (agents/episode.h), every sample's calls token by token
//   summary.json    pass@k, fast_p per level and overall against eager and torch.compile, counts
//   candidates/     every kernel file, under <task id>/sample<S>_t<T>.py (written as the run goes)
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/episode.h"
#include "agents/kernel_evaluator.h"
#include "agents/optimizer.h"
#include "agents/policy_agent.h"
#include "agents/prompts.h"
#include "agents/selection_agent.h"
#include "eval/metrics.h"
#include "eval/task.h"
#include "llm/backbone.h"

namespace vinci::bench {

struct BenchSettings {
  int samples = 1;
  // Tasks whose requests share one generation: a native model holds a chunk's samples at once, so
  // this bounds its batch (250 tasks x 8192 tokens would not fit).
  int batch_tasks = 16;
  agents::PolicySettings policy = [] {
    agents::PolicySettings p;
    p.turns = 1;  // KernelBench's protocol: one answer per sample
    return p;
  }();
  uint64_t seed = 0;
  // Skill injection: with a library, sample k of a task carries the skills of the selection agent's
  // k-th sampled scheme (selection.schemes is set to samples); without one, no sample carries skills.
  const skills::Library* library = nullptr;
  agents::SelectionSettings selection;
};

// One task's samples. agents::Rollout::sample is the sample's index; the samples share nothing, not even
// the strategy memory, so that pass@k's estimator sees independent draws.
struct BenchTask {
  agents::PolicyTask task;
  std::vector<agents::Rollout> samples;
  std::vector<agents::AgentCall> selection_calls;  // when skills were injected: one per sample
  std::vector<std::string> skills_shown;           // what the selection agent saw
  agents::Episode episode;                         // the selection calls, then every sample's calls
  int correct_samples() const;                     // samples with at least one correct turn
};

struct BenchOutcome {
  std::string model, device;
  int samples = 1, turns = 1;
  std::vector<BenchTask> tasks;               // in the order given
  std::vector<eval::Result> results() const;  // every evaluated attempt, by task, sample and turn
};

BenchOutcome bench_model(llm::Backbone& backbone, agents::KernelEvaluator& evaluator, const agents::Prompts& prompts,
                         const std::vector<eval::Task>& tasks, const std::filesystem::path& candidates_dir,
                         const BenchSettings& settings, const agents::ProgressFn& progress = {});

// The k that pass@k is reported for: 1, each power of two below samples, and samples.
std::vector<int> pass_k_values(int samples);

struct BenchSummary {
  std::string model, device;
  int tasks = 0, samples = 0, turns = 0;
  int attempts = 0;   // answers: tasks x samples x turns
  int evaluated = 0;  // answers that held a kernel file
  int no_kernel = 0;  // answers without one: a parse failure or a backbone error
  int correct_attempts = 0;
  int solved_tasks = 0;             // tasks with at least one correct sample
  std::map<int, double> pass_at_k;  // k -> eval::pass_at_k(samples, correct samples, k), averaged over tasks
  // fast_p over every evaluated attempt; a task counts its best correct one, so with several samples
  // this is best-of-samples fast_p.
  eval::Summary eager, compile;
};

BenchSummary summarize_bench(const BenchOutcome& outcome);
nlohmann::json to_json(const BenchSummary& summary);

// pass@k, counts and eval::format_table against eager (and torch.compile when it was timed).
std::string bench_table(const BenchSummary& summary);

// results.jsonl, attempts.jsonl, episodes.jsonl and summary.json; attempts name their files
// relative to out_dir.
void write_bench_outputs(const std::filesystem::path& out_dir, const BenchOutcome& outcome,
                         const BenchSummary& summary);

}  // namespace vinci::bench
