#include "bench/model_bench.h"

#include <algorithm>

#include <fmt/format.h>

#include "agents/feedback.h"
#include "core/files.h"
#include "core/hash.h"

namespace vinci::bench {

// The agents' types this engine drives, by their short names.
using agents::AgentCall;
using agents::Episode;
using agents::KernelEvaluator;
using agents::outcome_line;
using agents::PolicySettings;
using agents::PolicySlot;
using agents::PolicyTask;
using agents::PolicyTurn;
using agents::ProgressFn;
using agents::Prompts;
using agents::Rollout;
using agents::SelectionOutcome;
using agents::SelectionSettings;
using agents::SkillScheme;
using agents::StrategyMemory;

namespace fs = std::filesystem;
using nlohmann::json;

int BenchTask::correct_samples() const {
  return static_cast<int>(
      std::count_if(samples.begin(), samples.end(), [](const Rollout& r) { return r.best_turn().has_value(); }));
}

std::vector<eval::Result> BenchOutcome::results() const {
  std::vector<eval::Result> out;
  for (const auto& b : tasks)
    for (const auto& r : b.samples)
      for (const auto& t : r.turns)
        if (t.result) out.push_back(*t.result);
  return out;
}

namespace {

// A task's own base for turn_seed, so that sample k of two tasks does not draw the same stream.
uint64_t bench_task_seed(uint64_t base, const std::string& task_id) {
  return std::stoull(core::content_hash(fmt::format("{}/{}", base, task_id)).substr(0, 8), nullptr, 16);
}

std::string bench_turn_summary(std::span<const PolicySlot> slots) {
  int kernels = 0, correct = 0;
  for (const PolicySlot& s : slots) {
    const PolicyTurn& t = s.rollout->turns.back();
    kernels += t.result.has_value();
    correct += t.result && t.result->correct();
  }
  return fmt::format("{} answers, {} kernels, {} correct", slots.size(), kernels, correct);
}

Episode bench_episode(const BenchTask& b, const std::string& model, const BenchSettings& settings, int turns) {
  Episode e;
  e.task = b.task.task.id;
  e.model = model;
  e.id = core::content_hash({b.task.task.id, model, std::to_string(settings.seed), "bench-model"}).substr(0, 16);
  e.calls = b.selection_calls;
  for (const auto& r : b.samples)
    for (const auto& c : r.calls) e.calls.push_back(c);
  e.meta.protocol = settings.library ? "kernelbench+skills" : "kernelbench";
  e.meta.skills_shown = b.skills_shown;
  if (settings.library) e.meta.library_size = settings.library->size();
  e.meta.turns = turns;
  e.meta.samples = settings.samples;
  e.meta.seed = settings.seed;
  e.meta.temperature = settings.policy.sampling.temperature;
  e.meta.max_new_tokens = settings.policy.sampling.max_new_tokens;
  return e;
}

json bench_attempt_json(const BenchTask& b, const Rollout& r, const PolicyTurn& t, const fs::path& out_dir) {
  const eval::Result* res = t.result ? &*t.result : nullptr;
  return {
      {"task", b.task.task.id},
      {"level", b.task.task.level},
      {"sample", r.sample},
      {"turn", t.turn},
      {"strategy", t.strategy},
      {"file", t.file.empty() ? json(nullptr) : json(t.file.lexically_proximate(out_dir).string())},
      {"parse_failure", t.parse_failure},
      {"class", res ? json(eval::to_string(res->verdict)) : json(nullptr)},
      {"reason", res ? res->reason : ""},
      {"outcome", res ? outcome_line(*res) : "no usable answer (" + t.parse_failure + ")"},
      {"speedup", t.speedup()},
      {"speedup_compile", res && res->correct() && res->speedup_compile ? json(*res->speedup_compile) : json(nullptr)},
      {"flags", res ? json(res->flags) : json(nullptr)}};
}

std::string which_tasks(size_t first, size_t last, size_t total) {
  return last == first + 1 ? fmt::format("task {} of {}", last, total)
                           : fmt::format("tasks {}-{} of {}", first + 1, last, total);
}

// One selection call per sample (the k-th sampled scheme goes to sample k), seeded per task.
void inject_skills(BenchTask& b, const BenchSettings& settings, llm::Backbone& backbone, const Prompts& prompts) {
  SelectionSettings selection = settings.selection;
  selection.schemes = settings.samples;
  selection.seed = bench_task_seed(settings.seed, b.task.task.id);
  SelectionOutcome selected = select_skills(backbone, prompts, *settings.library, b.task.task, selection);
  b.selection_calls = std::move(selected.calls);
  b.skills_shown = std::move(selected.shown);
  for (auto& r : b.samples)
    for (const SkillScheme& s : selected.schemes)
      if (!s.null_scheme && s.index == r.sample) r.skills = skills_of(*settings.library, s);
}

}  // namespace

BenchOutcome bench_model(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts,
                         const std::vector<eval::Task>& tasks, const fs::path& candidates_dir,
                         const BenchSettings& settings, const ProgressFn& progress) {
  if (settings.samples < 1 || settings.batch_tasks < 1)
    throw std::invalid_argument(fmt::format("bench_model needs samples >= 1 and batch_tasks >= 1 (got {} and {})",
                                            settings.samples, settings.batch_tasks));
  BenchOutcome out;
  out.model = backbone.model_name();
  out.device = evaluator.device();
  out.samples = settings.samples;
  out.turns = std::max(1, settings.policy.turns);
  // Slots point into out.tasks: it must never reallocate.
  out.tasks.reserve(tasks.size());
  const size_t chunk = static_cast<size_t>(settings.batch_tasks);
  for (size_t first = 0; first < tasks.size(); first += chunk) {
    const size_t last = std::min(tasks.size(), first + chunk);
    for (size_t i = first; i < last; ++i) {
      BenchTask& b = out.tasks.emplace_back();
      b.task = {tasks[i], core::read_file(tasks[i].file), candidates_dir / tasks[i].id};
      for (int k = 0; k < settings.samples; ++k) {
        Rollout& r = b.samples.emplace_back();
        r.sample = k;
        r.label = fmt::format("sample{}", k);
      }
    }
    if (settings.library) {
      if (progress) progress(fmt::format("{}: selecting skills", which_tasks(first, last, tasks.size())));
      for (size_t i = first; i < last; ++i) inject_skills(out.tasks[i], settings, backbone, prompts);
    }
    std::vector<StrategyMemory> memories((last - first) * settings.samples);  // one per sample (BenchTask)
    std::vector<PolicySlot> slots;
    for (size_t i = first; i < last; ++i) {
      BenchTask& b = out.tasks[i];
      const uint64_t seed = bench_task_seed(settings.seed, b.task.task.id);
      for (auto& r : b.samples) slots.push_back({&b.task, &r, &memories[slots.size()], seed});
    }
    const std::string which = which_tasks(first, last, tasks.size());
    for (int t = 0; t < out.turns; ++t) {
      if (progress) progress(fmt::format("{}, turn {}/{}: {} answers", which, t + 1, out.turns, slots.size()));
      policy_turn(backbone, evaluator, prompts, slots, settings.policy);
      if (progress) progress(fmt::format("{}, turn {}/{}: {}", which, t + 1, out.turns, bench_turn_summary(slots)));
    }
    for (size_t i = first; i < last; ++i)
      out.tasks[i].episode = bench_episode(out.tasks[i], out.model, settings, out.turns);
  }
  return out;
}

std::vector<int> pass_k_values(int samples) {
  std::vector<int> ks{1};
  for (int k = 2; k < samples; k *= 2) ks.push_back(k);
  if (samples > 1) ks.push_back(samples);
  return ks;
}

BenchSummary summarize_bench(const BenchOutcome& outcome) {
  BenchSummary s;
  s.model = outcome.model;
  s.device = outcome.device;
  s.tasks = static_cast<int>(outcome.tasks.size());
  s.samples = outcome.samples;
  s.turns = outcome.turns;
  std::vector<eval::Task> tasks;
  for (const auto& b : outcome.tasks) {
    tasks.push_back(b.task.task);
    const int c = b.correct_samples();
    s.solved_tasks += c > 0;
    for (int k : pass_k_values(s.samples)) s.pass_at_k[k] += eval::pass_at_k(s.samples, c, k);
    for (const auto& r : b.samples)
      for (const auto& t : r.turns) {
        ++s.attempts;
        if (!t.result) {
          ++s.no_kernel;
          continue;
        }
        ++s.evaluated;
        s.correct_attempts += t.result->correct();
      }
  }
  for (auto& [k, sum] : s.pass_at_k) sum = s.tasks ? sum / s.tasks : 0.0;
  const auto results = outcome.results();
  const auto per_level = eval::task_ids_by_level(tasks);
  s.eager = eval::summarize(results, per_level, eval::Baseline::eager);
  s.compile = eval::summarize(results, per_level, eval::Baseline::compile);
  return s;
}

json to_json(const BenchSummary& s) {
  json pass = json::object();
  for (const auto& [k, v] : s.pass_at_k) pass[std::to_string(k)] = v;
  return {{"model", s.model},
          {"device", s.device},
          {"tasks", s.tasks},
          {"samples", s.samples},
          {"turns", s.turns},
          {"pass_at_k", pass},
          {"fast_p", {{"eager", eval::to_json(s.eager)}, {"compile", eval::to_json(s.compile)}}},
          {"counts",
           {{"attempts", s.attempts},
            {"evaluated", s.evaluated},
            {"no_kernel", s.no_kernel},
            {"correct_attempts", s.correct_attempts},
            {"solved_tasks", s.solved_tasks}}}};
}

std::string bench_table(const BenchSummary& s) {
  std::string out =
      fmt::format("{} on {}: {} task{}, {} sample{} of {} turn{} each\n", s.model, s.device, s.tasks,
                  s.tasks == 1 ? "" : "s", s.samples, s.samples == 1 ? "" : "s", s.turns, s.turns == 1 ? "" : "s");
  for (const auto& [k, v] : s.pass_at_k) out += fmt::format("pass@{} {:.1f}%  ", k, 100.0 * v);
  out += fmt::format("({} of {} tasks solved)\n", s.solved_tasks, s.tasks);
  out += fmt::format("answers: {}, {} kernels evaluated, {} without a kernel, {} correct\n\n", s.attempts, s.evaluated,
                     s.no_kernel, s.correct_attempts);
  out += eval::format_table(s.eager);
  // Without the torch.compile baseline (--no-compile-baseline) its table would be all zeros.
  if (s.compile.overall.with_speedup > 0) out += "\n" + eval::format_table(s.compile);
  return out;
}

void write_bench_outputs(const fs::path& out_dir, const BenchOutcome& outcome, const BenchSummary& summary) {
  // These files are written once, at the end of a run that may have taken hours: a byte of invalid
  // UTF-8 in some model's answer must cost that character, not every file.
  const auto line = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; };
  std::string results, attempts, episodes;
  for (const auto& r : outcome.results()) results += line(eval::to_json(r));
  for (const auto& b : outcome.tasks) {
    for (const auto& r : b.samples)
      for (const auto& t : r.turns) attempts += line(bench_attempt_json(b, r, t, out_dir));
    episodes += line(to_json(b.episode));
  }
  core::write_file_atomic(out_dir / "results.jsonl", results);
  core::write_file_atomic(out_dir / "attempts.jsonl", attempts);
  core::write_file_atomic(out_dir / "episodes.jsonl", episodes);
  core::write_file_atomic(out_dir / "summary.json",
                          to_json(summary).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace vinci::bench
