// vinci train sft and vinci train rl: the SFT cold start and the co-evolution run.
//
// vinci train sft: the SFT cold start. The diversity filter runs first (its report lands in --out),
// then masked cross-entropy on the answers; every step is a line of metrics.jsonl, and the model
// (or its LoRA adapter, in PEFT's layout) is saved to --out/final.
// vinci train rl: the co-evolution run (train/coevolution), configured by one TOML file.
// Both are data parallel under torchrun (`torchrun --no-python --nproc-per-node N vinci train ...`);
// rank 0 alone writes.
#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/agent_options.h"
#include "cli/backbone_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "cli/evaluations.h"
#include "cli/evaluator_options.h"
#include "cli/skills_db.h"
#include "core/files.h"
#include "core/setup_error.h"
#include "llm/model_config.h"
#include "llm_native/native_backbone.h"
#include "rl/diversity_filter.h"
#include "train/coevolution_config.h"
#include "train/heldout_point.h"
#include "train/run_folder.h"
#include "train/sft_run.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct SftCommandOptions {
  std::string data, out, schedule = "constant";
  BackboneOptions backbone;
  int lora_rank = 16;
  double lora_alpha = 32;
  bool no_filter = false;
  rl::DiversityConfig filter;
  train::SftConfig sft;
  int distributed_timeout_s = 1800;
};

int run_sft(SftCommandOptions& o) {
  train::SftRun run{.data = o.data, .out = o.out, .model = o.backbone.model};
  run.native.device = o.backbone.device;
  run.native.dtype = o.backbone.dtype;
  run.native.chat_template = o.backbone.chat_template;
  run.native.training.mode = o.lora_rank > 0 ? llm::Training::Mode::lora : llm::Training::Mode::full;
  run.native.training.lora.rank = o.lora_rank;
  run.native.training.lora.alpha = o.lora_alpha;
  run.filter = !o.no_filter;
  run.filter_config = o.filter;
  run.sft = o.sft;
  run.sft.optimizer.lr.shape = rl::lr_shape_from_string(o.schedule);
  run.distributed_timeout = std::chrono::seconds(o.distributed_timeout_s);
  const train::SftRunOutcome outcome = train::run_sft(run);
  if (!outcome.main) return 0;
  const train::SftOutcome& trained = outcome.trained;
  if (trained.skipped_too_long > 0)
    spdlog::warn("{} conversations longer than --max-sequence-tokens {} were skipped", trained.skipped_too_long,
                 o.sft.max_sequence_tokens);
  if (trained.resumed_from_step > 0) spdlog::info("resumed from step {}", trained.resumed_from_step);
  if (!trained.complete) {
    fmt::print("stopped after step {} (--max-steps); continue with --resume\n", o.sft.max_steps);
    return 0;
  }
  if (!outcome.saved) {
    fmt::print("nothing left to train: the run in {} is complete\n", o.out);
    return 0;
  }
  fmt::print("trained {} steps on {} conversations; loss {:.4f} -> {:.4f}; model in {}\n", trained.steps.size(),
             outcome.kept - trained.skipped_too_long, trained.steps.front().loss, trained.steps.back().loss,
             (fs::path(o.out) / "final").string());
  return 0;
}

Action add_sft_command(CLI::App& app) {
  auto o = std::make_shared<SftCommandOptions>();
  app.add_option("--data", o->data,
                 "JSONL conversations: {\"messages\": [...], \"tools\"?: [...], \"meta\": {task, level, "
                 "role, skills?}}")
      ->required()
      ->check(CLI::ExistingFile);
  add_backbone_options(app, o->backbone);
  app.add_option("--out", o->out, "output folder: filter_report.jsonl, metrics.jsonl, final/")->required();
  app.add_option("--lora-rank", o->lora_rank, "train LoRA adapters of this rank; 0 trains every parameter")
      ->capture_default_str();
  app.add_option("--lora-alpha", o->lora_alpha, "LoRA scale numerator (the update is scaled by alpha / rank)")
      ->capture_default_str();
  auto& s = o->sft;
  app.add_option("--epochs", s.epochs, "passes over the data")->check(at_least(1))->capture_default_str();
  app.add_option("--lr", s.optimizer.lr.peak, "peak learning rate")->capture_default_str();
  app.add_option("--warmup-steps", s.optimizer.lr.warmup_steps, "linear warm-up steps")->capture_default_str();
  app.add_option("--schedule", o->schedule, "after warm-up: constant or cosine")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  app.add_option("--total-steps", s.optimizer.lr.total_steps, "cosine: the step the decay ends at");
  app.add_option("--min-lr-ratio", s.optimizer.lr.min_ratio, "cosine: the floor, as a fraction of --lr")
      ->capture_default_str();
  app.add_option("--weight-decay", s.optimizer.weight_decay, "AdamW's decoupled weight decay")->capture_default_str();
  app.add_option("--max-grad-norm", s.optimizer.max_grad_norm, "clip gradients to this global norm (0: no clipping)")
      ->capture_default_str();
  app.add_option("--batch-tokens", s.batch_tokens, "sequence tokens per optimizer step")->capture_default_str();
  app.add_option("--row-tokens", s.row_tokens, "packing row length")->capture_default_str();
  app.add_option("--max-sequence-tokens", s.max_sequence_tokens, "skip longer conversations")->capture_default_str();
  app.add_option("--seed", s.seed, "the order of conversations in each epoch")->capture_default_str();
  app.add_option("--checkpoint-every", s.checkpoint_every,
                 "write a checkpoint (model, optimizer, data cursor) to --out/checkpoints every N steps; one is always "
                 "written at the end")
      ->capture_default_str();
  app.add_flag("--resume", s.resume, "continue the run in --out from its newest checkpoint");
  app.add_option("--max-steps", s.max_steps, "stop after this many steps (checkpointed; --resume continues)");
  app.add_option("--distributed-timeout", o->distributed_timeout_s,
                 "under torchrun: seconds a rank waits for the others")
      ->capture_default_str();
  auto& f = o->filter;
  app.add_flag("--no-filter", o->no_filter, "train on every conversation (skip the diversity filter)");
  app.add_option("--near-duplicate", f.near_duplicate,
                 "estimated Jaccard similarity at which a solution repeats another")
      ->capture_default_str();
  app.add_option("--max-per-task", f.max_per_task, "conversations kept per (task, role); 0: no cap")
      ->capture_default_str();
  app.add_option("--max-per-skill", f.max_per_skill, "conversations kept per skill; 0: no cap")->capture_default_str();
  app.add_option("--balance-ratio", f.balance_ratio, "no level or role above this x the smallest; 0: no balancing")
      ->capture_default_str();
  return [o] { return run_sft(*o); };
}

struct RlCommandOptions {
  std::string config, tasks, out, skills_db, prompts, filter, queue;
  std::vector<int> levels;
  std::string model, model_device = "auto", dtype = "auto", chat_template;
  EvaluatorOptions eval;
  int64_t steps = 0;
  bool resume = false;
  double deadline_s = 0;
};

int run_rl(RlCommandOptions& o) {
  // The deadline counts from the start, model loading and the evaluator's set-up included.
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(o.deadline_s * 1000));
  const fs::path out(o.out);
  train::refuse_earlier_run(out, o.resume);
  auto file =
      o.config.empty() ? train::parse_coevolution_config("", "(defaults)") : train::load_coevolution_config(o.config);
  if (o.steps > 0) file.run.steps = o.steps;
  const auto tasks = select_tasks(o.tasks, o.levels, o.filter);
  // Under torchrun: this rank's device and its share of the host's GPUs for timing kernels.
  const auto launch = train::launched();
  const bool main = launch.rank == 0;
  const std::string model_device = train::rank_device(launch, o.model_device);
  o.eval.config.gpu_share_index = launch.local_rank;
  o.eval.config.gpu_share_count = launch.local_world_size;
  fs::create_directories(out);
  if (main) {
    if (o.config.empty())
      core::write_file_atomic(out / "config.toml",
                              core::read_file(fs::path(VINCI_SOURCE_ROOT) / "configs/coevolution.toml"));
    else
      core::write_file_atomic(out / "config.toml", core::read_file(o.config));
  }

  llm::NativeOptions native;
  native.device = model_device;
  native.dtype = o.dtype;
  native.chat_template = o.chat_template;
  native.training = file.training;
  spdlog::info("loading {} ({}, {}), training {}", o.model, model_device, o.dtype,
               file.training.mode == llm::Training::Mode::lora ? fmt::format("LoRA rank {}", file.training.lora.rank)
                                                               : std::string("every parameter"));
  auto backbone = llm::open_native_backbone(o.model, native);
  const auto parallel = train::join(launch, *backbone, std::chrono::seconds(file.run.distributed_timeout_s));

  // Rank 0 creates (and seeds) the library before the others open it.
  std::unique_ptr<skills::SkillStore> store;
  const auto open_store = [&] {
    store = o.skills_db.empty()
                ? open_skills_db((out / "skills.db").string(), main ? DbOpen::seed_if_new : DbOpen::create)
                : open_skills_db(o.skills_db, DbOpen::existing);
  };
  if (main) open_store();
  parallel.barrier();
  if (!main) open_store();
  const agents::Prompts prompts(o.prompts);
  const auto evaluations = open_evaluations(o.eval.resolved(), o.queue.empty() ? file.eval_queue : o.queue);
  spdlog::info("co-evolution on {} tasks, {} per step, {} steps; kernels evaluated on {}; library {} ({} skills)",
               tasks.size(), file.run.tasks_per_step, file.run.steps, evaluations->describe(), store->path().string(),
               store->list(skills::Status::admitted).size());

  const auto log_step = [](const rl::CoevolutionMetrics& m) {
    spdlog::info(
        "step {}: reward {:.3f} (selection {:.3f}, summary {:.3f}), fast_1 {:.2f}, loss {:.4f}, {} samples, "
        "skills {} proposed / {} admitted, library {}; generate {:.1f} s, evaluate {:.1f} s, train {:.1f} s",
        m.step, m.policy.reward_mean, m.selection.reward_mean, m.summary.reward_mean, m.fast_1, m.pg_loss,
        m.trained_samples, m.skills_proposed, m.skills_admitted, m.library_size, m.generate_s, m.evaluate_s, m.train_s);
  };
  // Without a deadline nothing is asked, so no step pays for the ranks' agreement on it.
  std::optional<rl::StepDeadline::Clock::time_point> ends_by;
  if (o.deadline_s > 0) ends_by = started + deadline;
  std::vector<eval::Task> heldout;
  if (file.heldout.every > 0) {
    heldout = train::heldout_subset(eval::load_suite(file.heldout.tasks).tasks, file.heldout.count, file.run.seed);
    if (heldout.empty())
      throw core::SetupError(fmt::format("[heldout] tasks: no task in {}", file.heldout.tasks.string()));
    spdlog::info("held-out curve: {} tasks of {}, every {} steps", heldout.size(), file.heldout.tasks.string(),
                 file.heldout.every);
  }
  const train::CoevolutionRun run{.out = out,
                                  .resume = o.resume,
                                  .model = llm::load_model_config(o.model),
                                  .on_step = log_step,
                                  .progress = [](const std::string& line) { spdlog::info("{}", line); },
                                  .deadline = ends_by,
                                  .heldout = heldout,
                                  .heldout_every = file.heldout.every};
  const int ended_at =
      train::train_coevolution(*backbone, *evaluations, prompts, *store, tasks, file.run, run, parallel);
  if (!main) return ended_at < file.run.steps ? 3 : 0;
  if (ended_at < file.run.steps) {
    fmt::print("stopped by --deadline after step {} of {}: model in {}; continue with --resume\n", ended_at,
               file.run.steps, (out / "final").string());
    return 3;
  }
  fmt::print("co-evolution done: {} steps; metrics in {}, model in {}\n", file.run.steps,
             (out / "metrics.jsonl").string(), (out / "final").string());
  return 0;
}

Action add_rl_command(CLI::App& app) {
  auto o = std::make_shared<RlCommandOptions>();
  app.add_option("--config", o->config, "a TOML file (configs/coevolution.toml lists every key with its default)")
      ->check(CLI::ExistingFile);
  app.add_option("--model", o->model, "the Hugging Face checkpoint to train (e.g. the SFT run's final/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--model-device", o->model_device, "where the model runs: auto, cpu, cuda or cuda:N")
      ->capture_default_str();
  app.add_option("--dtype", o->dtype, "auto (bf16 on GPU, fp32 on CPU), float32, bfloat16")->capture_default_str();
  app.add_option("--chat-template", o->chat_template, "a Jinja chat template overriding the checkpoint's")
      ->check(CLI::ExistingFile);
  app.add_option("--tasks", o->tasks, "the training task suite (levelN/<number>_<Name>.py)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--level", o->levels, "only these levels");
  app.add_option("--filter", o->filter, "only tasks whose id matches this regex");
  app.add_option("--out", o->out, "output folder: metrics.jsonl, checkpoints/, episodes/, candidates/, final/")
      ->required();
  app.add_option("--skills", o->skills_db, "the skill library that co-evolves (default: --out/skills.db, seeded)");
  app.add_option("--prompts", o->prompts, "a folder of prompt files overriding the shipped ones")
      ->check(CLI::ExistingDirectory);
  app.add_option("--steps", o->steps, "override [run] steps");
  app.add_flag("--resume", o->resume, "continue the run in --out from its newest checkpoint");
  app.add_option("--deadline", o->deadline_s,
                 "seconds by which the run ends (a job's time limit): no step starts that the slowest step so "
                 "far would carry past it; the last finished step is checkpointed with final/, the command "
                 "exits 3, and --resume goes on")
      ->check(CLI::PositiveNumber);
  add_evaluator_options(app, o->eval);
  add_queue_option(app, o->queue);
  return [o] { return run_rl(*o); };
}

}  // namespace

Action add_train_command(CLI::App& app) {
  app.require_subcommand(1);
  auto* sft =
      app.add_subcommand("sft", "the SFT cold start: diversity filter, then masked cross-entropy on the answers");
  auto run_sft_command = add_sft_command(*sft);
  auto* rl = app.add_subcommand("rl", "co-evolution: the three agents trained together while the skill library grows");
  auto run_rl_command = add_rl_command(*rl);
  return [sft, run_sft_command, run_rl_command] { return sft->parsed() ? run_sft_command() : run_rl_command(); };
}

}  // namespace vinci::cli
