// The held-out curve of a co-evolution run: greedy first answers to a fixed held-out subset.
//
// Every N steps the model answers each task of a fixed subset of held-out tasks once, greedily, and
// `vinci bench-model`'s engine judges the answers. A run's own fast_1 is measured on the tasks it
// trains on, with its sampling temperature; the curve is what the protocol of docs/learning.md
// reports across sessions: one answer per task at temperature 0, without skills (KernelBench's
// protocol), on the same tasks at every point.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "agents/kernel_evaluator.h"
#include "agents/prompts.h"
#include "eval/task.h"
#include "llm/backbone.h"
#include "rl/coevolution_metrics.h"

namespace vinci::train {

// count tasks of suite drawn by seed (all of them when it has fewer), in the suite's order.
std::vector<eval::Task> heldout_subset(const std::vector<eval::Task>& suite, int count, uint64_t seed);

// The point: tasks answered and judged now, with bench-model's files (results, attempts, episodes,
// summary, candidates) written to out_dir.
rl::HeldOutPoint heldout_point(llm::Backbone& backbone, agents::KernelEvaluator& evaluator,
                               const agents::Prompts& prompts, const std::vector<eval::Task>& tasks, int max_new_tokens,
                               uint64_t seed, const std::filesystem::path& out_dir);

}  // namespace vinci::train
