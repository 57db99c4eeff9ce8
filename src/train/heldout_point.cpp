#include "train/heldout_point.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "bench/model_bench.h"

namespace vinci::train {

std::vector<eval::Task> heldout_subset(const std::vector<eval::Task>& suite, int count, uint64_t seed) {
  std::vector<size_t> order(suite.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // A Fisher-Yates pass of our own: std::shuffle's draws are the standard library's to choose, and
  // the subset must be the same on every machine a run continues on.
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  order.resize(std::min(order.size(), static_cast<size_t>(std::max(count, 0))));
  std::sort(order.begin(), order.end());
  std::vector<eval::Task> out;
  for (const size_t i : order) out.push_back(suite[i]);
  return out;
}

rl::HeldOutPoint heldout_point(llm::Backbone& backbone, agents::KernelEvaluator& evaluator,
                               const agents::Prompts& prompts, const std::vector<eval::Task>& tasks, int max_new_tokens,
                               uint64_t seed, const std::filesystem::path& out_dir) {
  bench::BenchSettings settings;
  settings.seed = seed;
  settings.policy.sampling.greedy = true;
  settings.policy.sampling.temperature = 0.0;
  settings.policy.sampling.max_new_tokens = max_new_tokens;
  std::filesystem::create_directories(out_dir / "candidates");
  const auto outcome = bench::bench_model(backbone, evaluator, prompts, tasks, out_dir / "candidates", settings);
  const auto summary = bench::summarize_bench(outcome);
  bench::write_bench_outputs(out_dir, outcome, summary);
  rl::HeldOutPoint point;
  point.tasks = tasks.size();
  point.correct = summary.eager.overall.correctness_rate;
  const auto fast = summary.eager.overall.fast_p.find(1.0);
  point.fast_1 = fast == summary.eager.overall.fast_p.end() ? 0.0 : fast->second;
  return point;
}

}  // namespace vinci::train
