#include "train/coevolution_trainer.h"

#include <chrono>

#include <fmt/format.h>

#include "train/checkpoint.h"

namespace vinci::train {

CoevolutionTrainer::CoevolutionTrainer(llm::TrainableBackbone& backbone, CoevolutionConfig config, CoevolutionRun run,
                                       const parallel::DataParallel& parallel)
    : backbone_(backbone),
      config_(std::move(config)),
      run_(std::move(run)),
      parallel_(parallel),
      optimizer_(backbone.trainable_parameters(), config_.optimizer) {}

RunPosition CoevolutionTrainer::start(const std::string& suite_hash) {
  suite_hash_ = suite_hash;
  RunPosition position;
  if (run_.resume) {
    if (const auto latest = latest_checkpoint(run_.out / "checkpoints")) {
      const auto state = load_checkpoint(*latest, backbone_, optimizer_);
      if (state.value("tasks", std::string()) != suite_hash)
        throw std::runtime_error(
            fmt::format("{}: the task suite differs from the one this run was trained on", latest->string()));
      position.tasks.epoch = state.at("epoch").get<int>();
      position.tasks.position = state.at("position").get<size_t>();
      position.step = state.at("step").get<int64_t>();
      if (run_.progress) run_.progress(fmt::format("resumed from step {} ({})", position.step, latest->string()));
    }
  }
  parallel_.broadcast_(backbone_.trainable_parameters());
  return position;
}

TrainStats CoevolutionTrainer::train(const rl::CoevolutionBatch& batch) {
  std::vector<int64_t> lengths;
  for (const auto& s : batch.samples) lengths.push_back(static_cast<int64_t>(s.ids.size()));
  std::vector<rl::TrainingSample> share;
  for (const size_t i : parallel::rank_share(lengths, parallel_.rank(), parallel_.world_size()))
    share.push_back(batch.samples[i]);

  TrainStats out;
  const auto start = std::chrono::steady_clock::now();
  out.update = policy_step(backbone_, optimizer_, share, config_.update, parallel_);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double flops = 0;  // forward and backward of every sequence of the update, over all ranks
  if (run_.model)
    for (const auto& s : batch.samples) {
      const auto [per_token, per_projected] = llm::training_flops(*run_.model, static_cast<int64_t>(s.ids.size()));
      flops += per_token * static_cast<double>(s.ids.size()) +
               per_projected * static_cast<double>(s.rollout_logprobs.size());
    }
  if (out.seconds > 0) {
    out.tokens_per_s = static_cast<double>(out.update.tokens) / out.seconds;
    out.mfu = flops / out.seconds / (config_.peak_tflops * 1e12 * parallel_.world_size());
  }
  return out;
}

void CoevolutionTrainer::checkpoint(const RunPosition& position, const std::string& library, bool force) {
  const bool due = force || position.step == config_.steps ||
                   (config_.checkpoint_every > 0 && position.step % config_.checkpoint_every == 0);
  if (!parallel_.is_main() || !due || saved_step_ == position.step) return;
  saved_step_ = position.step;
  save_checkpoint(run_.out / "checkpoints", position.step, backbone_, optimizer_,
                  {{"epoch", position.tasks.epoch},
                   {"position", position.tasks.position},
                   {"tasks", suite_hash_},
                   {"skills_snapshot", position.skills_snapshot},
                   {"library", library},
                   {"kind", "coevolution"}});
}

void CoevolutionTrainer::finish() {
  if (parallel_.is_main()) backbone_.save(run_.out / "final");
}

}  // namespace vinci::train
