// vinci bench-model --tasks DIR: a backbone over a task suite, then pass@k and fast_p.
//
// vinci bench-model --tasks DIR: a backbone over a task suite under the KernelBench protocol (one
// sample per task, one turn, no skills, by default; --library injects skills the selection agent
// picks), then pass@k and fast_p. Against a local
// checkpoint or an OpenAI-compatible server; everything lands in --out, and a run that was stopped
// continues with --resume.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/feedback.h"
#include "agents/run_journal.h"
#include "bench/model_bench.h"
#include "cli/agent_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "cli/evaluations.h"
#include "cli/evaluator_options.h"
#include "core/files.h"
#include "skills/skill_jsonl.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct BenchModelOptions {
  std::string tasks, out, prompts, filter, queue;
  std::vector<int> levels;
  std::vector<std::string> library;  // skill JSONL files; empty: no skill injection
  int selection_max_new_tokens = 2048;
  // The backbone.
  AgentModelOptions backbone;
  // The protocol.
  bool resume = false;
  double temperature = 1.0;
  int max_new_tokens = 8192;
  bench::BenchSettings settings;
  EvaluatorOptions eval;
};

nlohmann::json bench_run_settings(const BenchModelOptions& o, const std::vector<eval::Task>& tasks) {
  const auto& s = o.settings;
  return {{"tasks", o.tasks},
          {"selected_tasks", tasks.size()},
          {"backbone", o.backbone.describe()},
          {"samples", s.samples},
          {"turns", s.policy.turns},
          {"batch_tasks", s.batch_tasks},
          {"temperature", o.temperature},
          {"max_new_tokens", o.max_new_tokens},
          {"seed", s.seed},
          {"library", o.library},
          {"selection_max_new_tokens", o.selection_max_new_tokens},
          {"device", o.eval.config.device},
          {"scale", o.eval.config.scale},
          {"compile_baseline", o.eval.config.compile_baseline}};
}

int run_bench_model(BenchModelOptions& o) {
  const std::vector<eval::Task> tasks = select_tasks(o.tasks, o.levels, o.filter);
  eval::EvalConfig config = o.eval.resolved();
  config.resolve();
  for (const auto& t : tasks) eval::check_task_source(t, config.python);
  auto model = open_agent_model(o.backbone);  // setup errors stop the run before it writes anything
  const fs::path out = o.out;
  // Refused before anything starts: a run must not overwrite another's results, or mix with them.
  if (!o.resume && fs::exists(out) && !fs::is_empty(out))
    throw std::runtime_error(fmt::format(
        "{} is not empty: pass --resume to continue the run recorded there, or another --out", out.string()));
  fs::create_directories(out / "candidates");
  write_run_settings(out, bench_run_settings(o, tasks), o.resume);

  auto& s = o.settings;
  s.policy.sampling.temperature = o.temperature;
  s.policy.sampling.max_new_tokens = o.max_new_tokens;
  const agents::Prompts prompts(o.prompts);
  std::optional<skills::Library> library;
  if (!o.library.empty()) {
    library.emplace(skills::read_skills_jsonl(o.library));
    s.library = &*library;
    s.selection.sampling.temperature = o.temperature;
    s.selection.sampling.max_new_tokens = o.selection_max_new_tokens;
  }
  const auto evaluations = open_evaluations(o.eval.resolved(), o.queue);

  spdlog::info("benchmarking {} on {} task(s) of {} (judged on {}): {} sample(s), {} turn(s), {} tasks per batch, {}",
               model->model_name(), tasks.size(), o.tasks, evaluations->describe(), s.samples, s.policy.turns,
               s.batch_tasks,
               library ? fmt::format("skills picked from a library of {}", library->size()) : "no skills");
  evaluations->report_to([](const eval::Result& r) {
    spdlog::info("  {} {}: {}", r.task, fs::path(r.candidate).filename().string(), agents::outcome_line(r));
  });
  const fs::path journal_path = out / "journal.jsonl";
  agents::RunJournal journal(journal_path);
  if (journal.recorded() > 0)
    spdlog::info("resuming: {} recorded calls in {}", journal.recorded(), journal_path.string());
  agents::ReplayBackbone replay_model(*model, journal);
  agents::ReplayEvaluator replay_eval(*evaluations, journal);

  const auto outcome = bench::bench_model(replay_model, replay_eval, prompts, tasks, out / "candidates", s,
                                          [](const std::string& line) { spdlog::info("{}", line); });
  if (journal.replayed() > 0) spdlog::info("{} calls answered from the journal", journal.replayed());
  const auto summary = bench::summarize_bench(outcome);
  bench::write_bench_outputs(out, outcome, summary);
  fmt::print("\n{}results in {}\n", bench::bench_table(summary), out.string());
  return 0;
}

}  // namespace

Action add_bench_model_command(CLI::App& app) {
  auto o = std::make_shared<BenchModelOptions>();
  app.footer(
      "Writes to --out: results.jsonl (every evaluated attempt, for vinci report), attempts.jsonl (task, sample, "
      "turn, file, parse failure, class, speedup, the judge's flags such as launch_bound), episodes.jsonl (one per "
      "task, token level), summary.json (pass@k for k = 1, powers of two and --samples; fast_p per level against "
      "eager and torch.compile; counts), candidates/ (every kernel file), run.json and journal.jsonl (for --resume). "
      "A sample counts for pass@k when any of its turns is correct; fast_p counts each task's best correct attempt "
      "over all its samples.");
  app.add_option("--tasks", o->tasks, "task suite: a folder of levelN/<number>_<Name>.py problem files")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--level", o->levels, "only these levels");
  app.add_option("--filter", o->filter, "only tasks whose id (levelN/<number>_<Name>) matches this regex");

  add_agent_model_options(app, o->backbone);

  auto& s = o->settings;
  app.add_option("--samples", s.samples, "independent samples per task (the n of pass@k)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--turns", s.policy.turns,
                 "turns per sample; more than 1 refines each sample with the evaluator's feedback")
      ->check(CLI::Range(1, 50))
      ->capture_default_str();
  app.add_option("--batch-tasks", s.batch_tasks, "tasks whose requests go into one batched generation and evaluation")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--temperature", o->temperature, "sampling temperature; 0 decodes greedily")->capture_default_str();
  app.add_option("--max-new-tokens", o->max_new_tokens, "tokens per answer")->check(at_least(1))->capture_default_str();
  app.add_option("--seed", s.seed, "seed of every sampled call (each task, sample and turn draws its own)")
      ->capture_default_str();
  app.add_option("--library", o->library,
                 "skill JSONL files: each sample carries the skills the selection agent picks from them (default: "
                 "no skills, KernelBench's protocol)")
      ->check(CLI::ExistingFile);
  app.add_option("--selection-max-new-tokens", o->selection_max_new_tokens, "tokens per selection answer")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--prompts", o->prompts, "a folder of prompt files overriding the shipped ones (prompts/policy_*.md)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->out, "output folder; must be empty or missing unless --resume")->required();
  app.add_flag("--resume", o->resume,
               "continue the run recorded in --out: completed calls are answered from its journal");

  add_evaluator_options(app, o->eval);
  add_queue_option(app, o->queue);
  return [o] { return run_bench_model(*o); };
}

}  // namespace vinci::cli
