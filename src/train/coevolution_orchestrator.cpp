#include "train/coevolution_orchestrator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "agents/lockstep.h"
#include "core/files.h"
#include "rl/rejection.h"

namespace vinci::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double elapsed_s(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The backbone and the evaluator as the agents see them, timed: the step's time breakdown.
class TimedBackbone final : public llm::Backbone {
 public:
  explicit TimedBackbone(llm::Backbone& inner) : inner_(inner) {}
  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override {
    const auto start = Clock::now();
    auto out = inner_.generate(requests);
    seconds += elapsed_s(start);
    return out;
  }
  std::string model_name() const override { return inner_.model_name(); }
  double seconds = 0;

 private:
  llm::Backbone& inner_;
};

class TimedEvaluator final : public agents::KernelEvaluator {
 public:
  explicit TimedEvaluator(agents::KernelEvaluator& inner) : inner_(inner) {}
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override {
    const auto start = Clock::now();
    auto out = inner_.evaluate(jobs);
    seconds += elapsed_s(start);
    candidates += out.size();
    for (const auto& r : out) measured += r.cached ? 0 : 1;
    return out;
  }
  std::string device() const override { return inner_.device(); }
  double seconds = 0;
  size_t candidates = 0, measured = 0;

 private:
  agents::KernelEvaluator& inner_;
};

struct Moments {
  double sum = 0, squares = 0, lengths = 0;
  size_t n = 0;
  void add(double v, double length) { sum += v, squares += v * v, lengths += length, ++n; }
  rl::RoleStats stats() const {
    if (n == 0) return {};
    const double count = static_cast<double>(n), mean = sum / count;
    return {mean, std::sqrt(std::max(0.0, squares / count - mean * mean)), lengths / count};
  }
};

// The library as the last flush before this step left it; before any flush, the store as it is
// (its seed skills). A resumed run thus sees its checkpoint's library, not skills admitted by steps
// it is about to redo.
skills::Library library_before(skills::SkillStore& store, int64_t step) {
  const auto snapshot = store.snapshot_at(step - 1);
  return skills::Library(snapshot ? store.load(*snapshot) : store.list(skills::Status::admitted));
}

// What a rank's tasks of one step produced, as every rank needs it: episodes by their task's place
// in the step's batch, the admitted skills, and the counts behind the metrics.
struct RankHarvest {
  std::map<size_t, agents::Episode> episodes;
  std::vector<skills::Skill> admitted;
  size_t proposed = 0, verified = 0, solved = 0;
};

// Ranks exchange harvests as text through the store; this is that text.
nlohmann::json harvest_json(const RankHarvest& h) {
  nlohmann::json episodes = nlohmann::json::array(), admitted = nlohmann::json::array();
  for (const auto& [index, e] : h.episodes) episodes.push_back({{"index", index}, {"episode", agents::to_json(e)}});
  for (const auto& skill : h.admitted) admitted.push_back(skills::to_json(skill));
  return {{"episodes", episodes},
          {"admitted", admitted},
          {"proposed", h.proposed},
          {"verified", h.verified},
          {"solved", h.solved}};
}

// Every rank's harvest merged, in the batch's task order.
RankHarvest gather(RankHarvest mine, const parallel::DataParallel& parallel) {
  if (parallel.world_size() == 1) return mine;
  RankHarvest all;
  for (const auto& text :
       parallel.all_gather(harvest_json(mine).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))) {
    const auto j = nlohmann::json::parse(text);
    for (const auto& e : j.at("episodes"))
      all.episodes.emplace(e.at("index").get<size_t>(), agents::episode_from_json(e.at("episode")));
    for (const auto& skill : j.at("admitted")) all.admitted.push_back(skills::skill_from_json(skill));
    all.proposed += j.at("proposed").get<size_t>();
    all.verified += j.at("verified").get<size_t>();
    all.solved += j.at("solved").get<size_t>();
  }
  return all;
}

// What one task's optimization adds to its rank's harvest.
void add_outcome(RankHarvest& harvest, size_t index, agents::OptimizeOutcome outcome) {
  for (const auto& s : outcome.summaries) harvest.proposed += s.proposals.size();
  harvest.verified += outcome.verifications.size();
  for (auto& s : agents::admitted_skills(outcome)) harvest.admitted.push_back(std::move(s));
  if (const auto* best = outcome.best_turn(); best && best->speedup() > 1.0) ++harvest.solved;
  harvest.episodes.emplace(index, std::move(outcome.episode));
}

// Rank 0's record of the step: the admitted skills staged for the flush, the episodes written.
void record_step(skills::SkillStore& store, const fs::path& out, int64_t step, std::vector<skills::Skill> admitted,
                 const std::vector<agents::Episode>& episodes) {
  for (auto& s : admitted) store.stage(std::move(s));
  std::string lines;
  for (const auto& e : episodes)
    lines += agents::to_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  core::write_file_atomic(out / "episodes" / fmt::format("step-{}.jsonl", step), lines);
}

// The mixed batch of the step's episodes: every agent's samples with their advantages; PRS thins
// correct policy turns whose kernels do little of the work. Its draws depend on the seed and the
// step alone, so every rank (and a resumed run) keeps the same samples.
void build_batch(rl::CoevolutionBatch& batch, const std::vector<agents::Episode>& episodes,
                 const CoevolutionConfig& config) {
  auto built = rl::training_samples(episodes, config.samples);
  batch.built = built.samples.size();
  batch.untrainable = built.untrainable;
  std::mt19937_64 rng(config.seed * 1000003 + static_cast<uint64_t>(batch.step));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::map<agents::Role, Moments> roles;
  for (auto& s : built.samples) {
    roles[s.role].add(s.reward, static_cast<double>(s.rollout_logprobs.size()));
    if (config.prs && s.role == agents::Role::policy &&
        !rl::prs_keep(s.correct, s.coverage, uniform(rng), config.prs_config)) {
      ++batch.prs_rejected;
      continue;
    }
    batch.samples.push_back(std::move(s));
  }
  batch.policy = roles[agents::Role::policy].stats();
  batch.selection = roles[agents::Role::selection].stats();
  batch.summary = roles[agents::Role::summary].stats();
}

}  // namespace

CoevolutionOrchestrator::CoevolutionOrchestrator(llm::Backbone& backbone, agents::KernelEvaluator& evaluator,
                                                 const agents::Prompts& prompts, skills::SkillStore& store,
                                                 const CoevolutionConfig& config, fs::path out,
                                                 agents::ProgressFn progress, const parallel::DataParallel& parallel)
    : backbone_(backbone),
      evaluator_(evaluator),
      prompts_(prompts),
      store_(store),
      config_(config),
      out_(std::move(out)),
      progress_(std::move(progress)),
      parallel_(parallel) {}

rl::CoevolutionBatch CoevolutionOrchestrator::rollout(int64_t step, int epoch,
                                                      std::span<const eval::Task* const> tasks) {
  const skills::Library library = library_before(store_, step);
  const std::string who = parallel_.world_size() > 1 ? fmt::format("rank {}: ", parallel_.rank()) : std::string();
  TimedBackbone timed_model(backbone_);
  TimedEvaluator timed_evaluator(evaluator_);
  const std::vector<size_t> mine = rl::rank_tasks(tasks.size(), parallel_.rank(), parallel_.world_size());
  std::vector<std::optional<agents::OptimizeOutcome>> outcomes(mine.size());
  agents::for_each_in_lockstep(
      timed_model, timed_evaluator, mine.size(), config_.parallel_tasks, [&](auto& me, size_t k) {
        const size_t i = mine[k];
        const eval::Task& task = *tasks[i];
        agents::PolicyTask policy_task{task, core::read_file(task.file),
                                       out_ / "candidates" / fmt::format("step-{}", step) / eval::flat_id(task.id)};
        fs::create_directories(policy_task.candidates_dir);
        agents::OptimizeSettings settings = config_.agents;
        settings.seed = config_.seed * 1000003 + static_cast<uint64_t>(step) * 1009 + i;
        if (progress_) progress_(fmt::format("{}step {}: task {}/{}: {}", who, step, i + 1, tasks.size(), task.id));
        outcomes[k] = agents::optimize(me, me, prompts_, library, policy_task, settings, progress_);
      });
  RankHarvest harvest;
  for (size_t k = 0; k < mine.size(); ++k) add_outcome(harvest, mine[k], std::move(*outcomes[k]));
  harvest = gather(std::move(harvest), parallel_);
  std::vector<agents::Episode> episodes;
  for (auto& [index, e] : harvest.episodes) episodes.push_back(std::move(e));
  if (parallel_.is_main()) record_step(store_, out_, step, std::move(harvest.admitted), episodes);

  rl::CoevolutionBatch batch;
  batch.step = step;
  batch.epoch = epoch;
  batch.tasks = tasks.size();
  batch.skills_proposed = harvest.proposed;
  batch.skills_verified = harvest.verified;
  batch.solved = harvest.solved;
  build_batch(batch, episodes, config_);
  const auto slowest = parallel_.max({timed_model.seconds, timed_evaluator.seconds});
  batch.generate_s = slowest[0];
  batch.evaluate_s = slowest[1];
  const auto counted =
      parallel_.sum({static_cast<double>(timed_evaluator.candidates), static_cast<double>(timed_evaluator.measured)});
  batch.candidates = static_cast<size_t>(counted[0]);
  batch.measured = static_cast<size_t>(counted[1]);
  return batch;
}

skills::FlushOutcome CoevolutionOrchestrator::publish_library(int64_t step) {
  const auto flushed = parallel_.is_main() ? store_.flush(step) : skills::FlushOutcome{};
  parallel_.barrier();
  return flushed;
}

}  // namespace vinci::train
