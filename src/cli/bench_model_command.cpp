// vinci bench-model --tasks DIR: a backbone over a task suite under the KernelBench protocol (one
// sample per task, one turn, no skills, by default), then pass@k and fast_p. Against a local
// checkpoint or an OpenAI-compatible server; everything lands in --out, and a run that was stopped
// continues with --resume.
#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agents/feedback.h"
#include "agents/model_bench.h"
#include "agents/run_journal.h"
#include "cli/backbone_options.h"
#include "cli/commands.h"
#include "core/files.h"
#include "eval/pool.h"
#include "llm/native_backbone.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct BenchModelOptions {
  std::string tasks, out, prompts, filter;
  std::vector<int> levels;
  // The backbone.
  std::string model, model_device = "auto", dtype = "auto", chat_template;
  ServerBackboneOptions server;
  // The protocol.
  bool resume = false;
  double temperature = 1.0;
  int max_new_tokens = 8192;
  agents::BenchSettings settings;
  // The evaluator.
  int compile_timeout_s = 900, run_timeout_s = 300;
  eval::EvalConfig eval;
};

// The same choice as `vinci optimize` makes: a server when --llm is given, else the checkpoint
// (whose options are --model-device, not backbone_options' --device: that one is the evaluator's).
std::unique_ptr<llm::Backbone> open_bench_model(const BenchModelOptions& o) {
  if (!o.server.url.empty()) return open_server_backbone(o.server);
  llm::NativeOptions native;
  native.device = o.model_device;
  native.dtype = o.dtype;
  native.chat_template = o.chat_template;
  spdlog::info("loading {} ({}, {})", o.model, o.model_device, o.dtype);
  return llm::open_native_backbone(o.model, native);
}

nlohmann::json bench_run_settings(const BenchModelOptions& o, const std::vector<eval::Task>& tasks) {
  const auto& s = o.settings;
  return {{"tasks", o.tasks},
          {"selected_tasks", tasks.size()},
          {"backbone", o.server.url.empty() ? o.model : o.server.url + " " + o.server.model_name},
          {"samples", s.samples},
          {"turns", s.policy.turns},
          {"batch_tasks", s.batch_tasks},
          {"temperature", o.temperature},
          {"max_new_tokens", o.max_new_tokens},
          {"seed", s.seed},
          {"device", o.eval.device},
          {"scale", o.eval.scale},
          {"compile_baseline", o.eval.compile_baseline}};
}

std::vector<eval::Task> selected_tasks(const BenchModelOptions& o) {
  const eval::Suite suite = eval::load_suite(o.tasks);
  for (const auto& s : suite.skipped) spdlog::warn("skipped {}", s);
  const std::regex filter(o.filter.empty() ? ".*" : o.filter);
  std::vector<eval::Task> out;
  for (const auto& t : suite.tasks) {
    if (!o.levels.empty() && std::find(o.levels.begin(), o.levels.end(), t.level) == o.levels.end()) continue;
    if (std::regex_search(t.id, filter)) out.push_back(t);
  }
  if (out.empty()) throw std::runtime_error(fmt::format("no task of {} passes --level/--filter", o.tasks));
  return out;
}

int run_bench_model(BenchModelOptions& o) {
  const std::vector<eval::Task> tasks = selected_tasks(o);
  const fs::path out = o.out;
  // Refused before anything starts: a run must not overwrite another's results, or mix with them.
  if (!o.resume && fs::exists(out) && !fs::is_empty(out))
    throw std::runtime_error(fmt::format("{} is not empty: pass --resume to continue the run recorded there, or another --out",
                                         out.string()));
  fs::create_directories(out / "candidates");
  const nlohmann::json settings_json = bench_run_settings(o, tasks);
  const fs::path settings_path = out / "run.json";
  if (o.resume) {
    if (auto old = core::try_read_file(settings_path); old && nlohmann::json::parse(*old, nullptr, false) != settings_json)
      spdlog::warn("{} was written with other settings: only calls identical to the earlier run's are replayed",
                   settings_path.string());
  }
  core::write_file_atomic(settings_path, settings_json.dump(2) + "\n");

  auto& s = o.settings;
  s.policy.sampling.temperature = o.temperature;
  s.policy.sampling.max_new_tokens = o.max_new_tokens;
  const agents::Prompts prompts(o.prompts);
  o.eval.compile_timeout = std::chrono::seconds(o.compile_timeout_s);
  o.eval.run_timeout = std::chrono::seconds(o.run_timeout_s);
  eval::EvaluatorPool pool(o.eval);
  auto model = open_bench_model(o);

  spdlog::info("benchmarking {} on {} task(s) of {} ({}): {} sample(s), {} turn(s), {} tasks per batch", model->model_name(),
               tasks.size(), o.tasks, pool.device_name(), s.samples, s.policy.turns, s.batch_tasks);
  agents::PoolEvaluator evaluator(pool, [](const eval::Result& r) {
    spdlog::info("  {} {}: {}", r.task, fs::path(r.candidate).filename().string(), agents::outcome_line(r));
  });
  const fs::path journal_path = out / "journal.jsonl";
  agents::RunJournal journal(journal_path);
  if (journal.recorded() > 0) spdlog::info("resuming: {} recorded calls in {}", journal.recorded(), journal_path.string());
  agents::ReplayBackbone replay_model(*model, journal);
  agents::ReplayEvaluator replay_eval(evaluator, journal);

  const auto outcome = agents::bench_model(replay_model, replay_eval, prompts, tasks, out / "candidates", s,
                                           [](const std::string& line) { spdlog::info("{}", line); });
  if (journal.replayed() > 0) spdlog::info("{} calls answered from the journal", journal.replayed());
  const auto summary = agents::summarize_bench(outcome);
  agents::write_bench_outputs(out, outcome, summary);
  fmt::print("\n{}results in {}\n", agents::bench_table(summary), out.string());
  return 0;
}

}  // namespace

Action add_bench_model_command(CLI::App& app) {
  auto o = std::make_shared<BenchModelOptions>();
  app.footer(
      "Writes to --out: results.jsonl (every evaluated attempt, for vinci report), attempts.jsonl (task, sample, "
      "turn, file, parse failure, class, speedup), episodes.jsonl (one per task, token level), summary.json (pass@k "
      "for k = 1, powers of two and --samples; fast_p per level against eager and torch.compile; counts), "
      "candidates/ (every kernel file), run.json and journal.jsonl (for --resume). A sample counts for pass@k when "
      "any of its turns is correct; fast_p counts each task's best correct attempt over all its samples.");
  app.add_option("--tasks", o->tasks, "task suite: a folder of levelN/<number>_<Name>.py problem files")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--level", o->levels, "only these levels");
  app.add_option("--filter", o->filter, "only tasks whose id (levelN/<number>_<Name>) matches this regex");

  auto* model = app.add_option("--model", o->model, "a Hugging Face checkpoint directory, run by the native backbone")
                    ->check(CLI::ExistingDirectory);
  auto* llm = add_server_backbone_options(app, o->server);
  model->excludes(llm);
  app.add_option("--model-device", o->model_device, "where the --model runs: auto, cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--dtype", o->dtype, "the --model's dtype: auto, float32, bfloat16 or float16")->capture_default_str();
  app.add_option("--chat-template", o->chat_template, "a Jinja chat template overriding the checkpoint's")
      ->check(CLI::ExistingFile);

  auto& s = o->settings;
  app.add_option("--samples", s.samples, "independent samples per task (the n of pass@k)")->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--turns", s.policy.turns, "turns per sample; more than 1 refines each sample with the evaluator's feedback")
      ->check(CLI::Range(1, 50))->capture_default_str();
  app.add_option("--batch-tasks", s.batch_tasks, "tasks whose requests go into one batched generation and evaluation")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--temperature", o->temperature, "sampling temperature; 0 decodes greedily")->capture_default_str();
  app.add_option("--max-new-tokens", o->max_new_tokens, "tokens per answer")->capture_default_str();
  app.add_option("--seed", s.seed, "seed of every sampled call (each task, sample and turn draws its own)")
      ->capture_default_str();
  app.add_option("--prompts", o->prompts, "a folder of prompt files overriding the shipped ones (prompts/policy_*.md)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->out, "output folder; must be empty or missing unless --resume")->required();
  app.add_flag("--resume", o->resume, "continue the run recorded in --out: completed calls are answered from its journal");

  auto& e = o->eval;
  app.add_option("--device", e.device, "where kernels are evaluated: cpu, cuda or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))->capture_default_str();
  app.add_option("--scale", e.scale, "shrink the sizes the tasks list in SCALABLE (e.g. 0.05 for CPU runs)")
      ->check(CLI::Range(1e-6, 1.0))->capture_default_str();
  app.add_option("--cache-dir", e.cache_dir, "evaluator cache folder (default $VINCI_CACHE or ~/.cache/vinci)");
  app.add_option("--trials", e.timing.trials, "timed calls per measurement")->capture_default_str();
  app.add_option("--time-budget", e.timing.budget_s, "seconds at most per timing run")->capture_default_str();
  app.add_flag("!--no-compile-baseline", e.compile_baseline, "skip the torch.compile baseline (fast_p vs compile is then empty)");
  app.add_option("--torch-ops", e.torch_ops, "torch compute ops inside ModelNew.forward")
      ->check(CLI::IsMember({"forbid", "warn", "allow"}))->capture_default_str();
  app.add_option("--compile-timeout", o->compile_timeout_s, "seconds per candidate build")->capture_default_str();
  app.add_option("--run-timeout", o->run_timeout_s, "seconds per check or timing request")->capture_default_str();
  app.callback([o, model, llm] {
    if (model->count() == 0 && llm->count() == 0) throw CLI::RequiredError("--model or --llm");
  });
  return [o] { return run_bench_model(*o); };
}

}  // namespace vinci::cli
