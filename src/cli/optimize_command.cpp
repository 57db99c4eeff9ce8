// vinci optimize TASK.py: the agents' loop against a checkpoint or a server.
//
// vinci optimize TASK.py: selection -> policy turns with evaluator feedback -> summary -> verifier,
// against a local checkpoint or an OpenAI-compatible server. Everything lands in --out; a run that
// was stopped continues with --resume.
#include <csignal>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/feedback.h"
#include "agents/optimize_report.h"
#include "agents/optimizer.h"
#include "agents/run_journal.h"
#include "cli/agent_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "cli/evaluator_options.h"
#include "cli/skills_db.h"
#include "core/files.h"
#include "eval/pool.h"
#include "skills/skill_jsonl.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct OptimizeOptions {
  std::string task, out, prompts, skills_db;
  // The backbone.
  AgentModelOptions backbone;
  // The agents.
  std::string strategy = "serial";
  bool resume = false, no_summary = false, no_admit = false;
  double temperature = 1.0;
  int max_new_tokens = 8192;
  agents::OptimizeSettings settings;
  EvaluatorOptions eval;
};

nlohmann::json run_settings(const OptimizeOptions& o) {
  const auto& s = o.settings;
  return {{"task", o.task},
          {"backbone", o.backbone.describe()},
          {"strategy", o.strategy},
          {"turns", s.policy.turns},
          {"samples", s.samples},
          {"schemes", s.selection.schemes},
          {"beam_width", s.beam_width},
          {"temperature", o.temperature},
          {"max_new_tokens", o.max_new_tokens},
          {"seed", s.seed},
          {"summary", !o.no_summary},
          {"repeats", s.verify.repeats},
          {"device", o.eval.config.device},
          {"scale", o.eval.config.scale}};
}

int run_optimize(OptimizeOptions& o) {
  const eval::Task task = eval::task_from_file(o.task);
  eval::EvalConfig config = o.eval.resolved();
  config.resolve();
  eval::check_task_source(task, config.python);
  auto model = open_agent_model(o.backbone);  // setup errors stop the run before it writes anything
  const fs::path out = o.out.empty() ? fs::path("vinci-optimize") / task.name : fs::path(o.out);
  const fs::path journal_path = out / "journal.jsonl";
  if (fs::exists(journal_path) && !o.resume)
    throw std::runtime_error(
        fmt::format("{} holds an earlier run: pass --resume to continue it, or another --out", out.string()));
  fs::create_directories(out / "candidates");
  write_run_settings(out, run_settings(o), o.resume);

  auto& s = o.settings;
  s.strategy = agents::strategy_from_string(o.strategy);
  s.summarize = !o.no_summary;
  s.policy.sampling.temperature = o.temperature;
  s.policy.sampling.max_new_tokens = o.max_new_tokens;
  s.verify.max_new_tokens = o.max_new_tokens;

  // A resumed run retrieves from the library its first start saw, not one its own admissions grew.
  auto store = open_skills_db(o.skills_db, DbOpen::existing);
  const fs::path library_path = out / "library_at_start.jsonl";
  if (!o.resume || !fs::exists(library_path))
    skills::write_skills_jsonl(library_path, store->list(skills::Status::admitted));
  const skills::Library library(skills::read_skills_jsonl(library_path));
  const agents::Prompts prompts(o.prompts);

  eval::EvaluatorPool pool(o.eval.resolved());

  spdlog::info("optimizing {} with {} on {}: {} strategy, {} turns, {} samples, {} skills in {}", task.id,
               model->model_name(), pool.device_name(), o.strategy, s.policy.turns, s.samples, library.size(),
               store->path().string());
  agents::PoolEvaluator evaluator(pool, [](const eval::Result& r) {
    spdlog::info("  {}: {}", fs::path(r.candidate).filename().string(), agents::outcome_line(r));
  });
  agents::RunJournal journal(journal_path);
  if (journal.recorded() > 0)
    spdlog::info("resuming: {} recorded calls in {}", journal.recorded(), journal_path.string());
  agents::ReplayBackbone replay_model(*model, journal);
  agents::ReplayEvaluator replay_eval(evaluator, journal);

  agents::PolicyTask policy_task{task, core::read_file(task.file), out / "candidates"};
  const auto outcome = agents::optimize(replay_model, replay_eval, prompts, library, policy_task, s,
                                        [](const std::string& line) { spdlog::info("{}", line); });
  if (journal.replayed() > 0) spdlog::info("{} calls answered from the journal", journal.replayed());
  agents::write_optimize_outputs(out, policy_task, outcome);
  if (!o.no_admit) {
    for (const auto& a : agents::record_in_library(*store, outcome))
      spdlog::info("library: {}", a.merged ? fmt::format("'{}' merged into '{}' as evidence", a.name, a.merged_into)
                                           : fmt::format("'{}' admitted", a.name));
  }
  fmt::print("\n{}results in {}\n", agents::summary_table(outcome), out.string());
  return outcome.best ? 0 : 2;
}

}  // namespace

Action add_optimize_command(CLI::App& app) {
  auto o = std::make_shared<OptimizeOptions>();
  app.add_option("task", o->task, "a KernelBench-format problem file (Model, get_inputs, get_init_inputs)")
      ->required()
      ->check(CLI::ExistingFile);
  add_agent_model_options(app, o->backbone);

  auto& s = o->settings;
  app.add_option("--skills", o->skills_db, "the skill library (default: the user's library, seeded on first use)");
  app.add_option("--turns", s.policy.turns, "policy turns per rollout")
      ->check(CLI::Range(1, 50))
      ->capture_default_str();
  app.add_option("--samples", s.samples, "rollouts per skill scheme")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--schemes", s.selection.schemes, "sampled skill schemes (a null scheme is always added)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  app.add_option("--strategy", o->strategy, "serial (refine with feedback), parallel (independent samples) or beam")
      ->check(CLI::IsMember({"serial", "parallel", "beam"}))
      ->capture_default_str();
  app.add_option("--beam-width", s.beam_width, "beam: kernels kept after each turn")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--temperature", o->temperature, "policy sampling temperature")->capture_default_str();
  app.add_option("--max-new-tokens", o->max_new_tokens, "tokens per policy answer")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "seed of every sampled call")->capture_default_str();
  app.add_flag("--no-summary", o->no_summary, "skip the summary agent and the verifier");
  app.add_option("--repeats", s.verify.repeats, "verifier repeats a skill must pass")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  app.add_flag("--no-admit", o->no_admit, "do not write admitted skills and usage into the library");
  app.add_option("--prompts", o->prompts, "a folder of prompt files overriding the shipped ones (prompts/*.md)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->out, "output folder (default vinci-optimize/<task name>)");
  app.add_flag("--resume", o->resume, "continue the run recorded in --out");

  add_evaluator_options(app, o->eval);
  return [o] { return run_optimize(*o); };
}

}  // namespace vinci::cli
