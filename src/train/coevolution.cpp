#include "train/coevolution.h"

#include <chrono>
#include <optional>

#include "core/files.h"
#include "rl/task_schedule.h"
#include "train/coevolution_orchestrator.h"
#include "train/coevolution_trainer.h"
#include "train/heldout_point.h"
#include "train/run_folder.h"

namespace vinci::train {

namespace {

rl::CoevolutionMetrics step_metrics(const rl::CoevolutionBatch& b, const TrainStats& t,
                                    const skills::FlushOutcome& flushed, int ranks) {
  rl::CoevolutionMetrics m;
  m.step = b.step;
  m.epoch = b.epoch;
  m.tasks = b.tasks;
  m.fast_1 = static_cast<double>(b.solved) / static_cast<double>(b.tasks);
  m.samples = b.built;
  m.trained_samples = b.samples.size();
  m.untrainable_calls = b.untrainable;
  m.pg_loss = t.update.loss;
  m.clip_fraction_low = t.update.clip_fraction_low;
  m.clip_fraction_high = t.update.clip_fraction_high;
  m.grad_norm = t.update.optimizer.grad_norm;
  m.lr = t.update.optimizer.lr;
  m.logprob_diff = t.update.mean_abs_logprob_diff;
  m.entropy = t.update.mean_entropy;
  m.mrs_rejected = t.update.mrs_rejected;
  m.prs_rejected = b.prs_rejected;
  m.skills_proposed = b.skills_proposed;
  m.skills_verified = b.skills_verified;
  m.skills_admitted = flushed.admissions.size();
  m.library_size = flushed.skills_in_snapshot;
  m.train_tokens = t.update.tokens;
  m.tokens_per_s = t.tokens_per_s;
  m.mfu = t.mfu;
  m.ranks = ranks;
  m.generate_s = b.generate_s;
  m.evaluate_s = b.evaluate_s;
  m.candidates = b.candidates;
  m.candidates_measured = b.measured;
  m.candidates_per_min = b.evaluate_s > 0 ? 60.0 * static_cast<double>(b.candidates) / b.evaluate_s : 0.0;
  m.train_s = t.seconds;
  m.policy = b.policy;
  m.selection = b.selection;
  m.summary = b.summary;
  return m;
}

}  // namespace

int train_coevolution(llm::TrainableBackbone& backbone, agents::KernelEvaluator& evaluator,
                      const agents::Prompts& prompts, skills::SkillStore& store, std::span<const eval::Task> tasks,
                      const CoevolutionConfig& config, const CoevolutionRun& run,
                      const parallel::DataParallel& parallel) {
  const rl::TaskSchedule schedule(tasks, config.tasks_per_step, config.seed);
  CoevolutionTrainer trainer(backbone, config, run, parallel);
  RunPosition position = trainer.start(schedule.suite_hash());
  CoevolutionOrchestrator orchestrator(backbone, evaluator, prompts, store, config, run.out, run.progress, parallel);
  std::optional<core::LineWriter> metrics;
  if (parallel.is_main()) {
    if (run.resume) drop_metrics_after_checkpoint(run.out);
    metrics.emplace(run.out / "metrics.jsonl", /*append=*/true);
  }

  std::optional<rl::StepDeadline> deadline;
  if (run.deadline) deadline.emplace(*run.deadline);
  // Ranks may read their clocks apart: one that says stop stops them all.
  const auto out_of_time = [&] {
    return parallel.max({deadline->leaves_room(rl::StepDeadline::Clock::now()) ? 0.0 : 1.0})[0] > 0.0;
  };
  const int first_step = position.step;
  while (position.step < config.steps) {
    if (deadline && out_of_time()) {
      if (position.step > first_step) trainer.checkpoint(position, store.path().string(), /*force=*/true);
      break;
    }
    const auto step_start = std::chrono::steady_clock::now();
    ++position.step;
    const auto step_tasks = schedule.next(position.tasks);
    const rl::CoevolutionBatch batch = orchestrator.rollout(position.step, position.tasks.epoch, step_tasks);
    const TrainStats trained = trainer.train(batch);
    const skills::FlushOutcome flushed = orchestrator.publish_library(position.step);
    position.skills_snapshot = flushed.step;
    rl::CoevolutionMetrics m = step_metrics(batch, trained, flushed, parallel.world_size());
    trainer.checkpoint(position, store.path().string());
    if (run.heldout_every > 0 && position.step % run.heldout_every == 0 && parallel.is_main())
      m.heldout = heldout_point(backbone, evaluator, prompts, run.heldout, config.agents.policy.sampling.max_new_tokens,
                                config.seed, run.out / "heldout" / ("step-" + std::to_string(position.step)));
    const auto took = std::chrono::steady_clock::now() - step_start;
    m.step_s = std::chrono::duration<double>(took).count();
    if (deadline) deadline->step_took(took);
    if (!parallel.is_main()) continue;
    metrics->write_line(to_json(m).dump());
    if (run.on_step) run.on_step(m);
  }
  trainer.finish();
  return position.step;
}

}  // namespace vinci::train
