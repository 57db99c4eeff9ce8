#include "train/sft_run.h"

#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "train/run_folder.h"

namespace vinci::train {

namespace fs = std::filesystem;

parallel::LaunchEnvironment launched() {
  return parallel::launch_environment().value_or(parallel::LaunchEnvironment{});
}

std::string rank_device(const parallel::LaunchEnvironment& launch, const std::string& device) {
  return launch.world_size > 1 ? llm::local_rank_device(device, launch.local_rank) : device;
}

parallel::DataParallel join(const parallel::LaunchEnvironment& launch, llm::TrainableBackbone& backbone,
                            std::chrono::seconds timeout) {
  if (launch.world_size == 1) return {};
  parallel::DataParallel parallel(launch, backbone.trainable_parameters().front().device(), timeout);
  spdlog::info("rank {} of {} (local rank {}) joined", launch.rank, launch.world_size, launch.local_rank);
  return parallel;
}

// filter_report.jsonl: one line per removed conversation, naming its line, task, role and the rule.
static std::string filter_report(std::span<const rl::SftConversation> conversations, const rl::DiversityReport& r) {
  std::string report;
  for (const auto& removal : r.removed)
    report += nlohmann::json{{"line", conversations[removal.index].line},
                             {"task", conversations[removal.index].task},
                             {"role", conversations[removal.index].role},
                             {"rule", removal.rule},
                             {"detail", removal.detail}}
                  .dump() +
              "\n";
  return report;
}

SftRunOutcome run_sft(SftRun run) {
  run.sft.checkpoint_dir = run.out / "checkpoints";
  refuse_earlier_run(run.out, run.sft.resume);
  if (run.sft.optimizer.lr.shape == rl::LrSchedule::Shape::cosine && run.sft.optimizer.lr.total_steps == 0)
    throw std::runtime_error("--schedule cosine needs --total-steps (the step the decay ends at)");
  const auto launch = launched();
  SftRunOutcome outcome;
  outcome.main = launch.rank == 0;
  fs::create_directories(run.out);
  if (run.sft.resume && outcome.main) drop_metrics_after_checkpoint(run.out);
  const auto conversations = rl::load_sft_conversations(run.data);
  outcome.conversations = conversations.size();
  spdlog::info("{}: {} conversations", run.data.string(), conversations.size());

  std::vector<rl::SftConversation> kept;
  if (run.filter) {
    outcome.filtered = rl::diversity_filter(conversations, run.filter_config);
    for (const size_t i : outcome.filtered.kept) kept.push_back(conversations[i]);
    if (outcome.main) fmt::print(stderr, "diversity filter: {}", outcome.filtered.summary());
  } else {
    kept = conversations;
  }
  outcome.kept = kept.size();
  if (outcome.main)
    core::write_file_atomic(run.out / "filter_report.jsonl", filter_report(conversations, outcome.filtered));

  run.native.device = rank_device(launch, run.native.device);
  const auto& training = run.native.training;
  spdlog::info("loading {} ({}, {}), training {}", run.model, run.native.device, run.native.dtype,
               training.mode == llm::Training::Mode::lora ? fmt::format("LoRA rank {}", training.lora.rank)
                                                          : std::string("every parameter"));
  auto backbone = llm::open_native_backbone(run.model, run.native);
  const auto parallel = join(launch, *backbone, run.distributed_timeout);

  std::optional<core::LineWriter> metrics;
  if (outcome.main) metrics.emplace(run.out / "metrics.jsonl", /*append=*/true);
  outcome.trained = train_sft(
      *backbone, kept, run.sft,
      [&](const SftStepLog& s) {
        metrics->write_line(
            nlohmann::json{{"epoch", s.epoch},
                           {"step", s.step},
                           {"loss", s.loss},
                           {"lr", s.optimizer.lr},
                           {"grad_norm", s.optimizer.grad_norm},
                           {"tokens", s.tokens},
                           {"sequences", s.sequences},
                           {"seconds", s.seconds},
                           {"tokens_per_s", s.seconds > 0 ? static_cast<double>(s.tokens) / s.seconds : 0.0}}
                .dump());
        spdlog::info("epoch {} step {}: loss {:.4f}, lr {:.3g}, grad norm {:.3g}, {} tokens in {:.2f} s", s.epoch,
                     s.step, s.loss, s.optimizer.lr, s.optimizer.grad_norm, s.tokens, s.seconds);
      },
      parallel);
  if (outcome.main && outcome.trained.complete && !outcome.trained.steps.empty()) {
    backbone->save(run.out / "final");
    outcome.saved = true;
  }
  return outcome;
}

}  // namespace vinci::train
