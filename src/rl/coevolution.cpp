#include "rl/coevolution.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"
#include "rl/checkpoint.h"

namespace vinci::rl {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The backbone and the evaluator as the agents see them, timed: the step's time breakdown.
class TimedBackbone final : public llm::Backbone {
 public:
  explicit TimedBackbone(llm::Backbone& inner) : inner_(inner) {}
  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override {
    const auto start = Clock::now();
    auto out = inner_.generate(requests);
    seconds += since(start);
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
    seconds += since(start);
    return out;
  }
  std::string device() const override { return inner_.device(); }
  double seconds = 0;

 private:
  agents::KernelEvaluator& inner_;
};

struct Moments {
  double sum = 0, squares = 0;
  size_t n = 0;
  void add(double v) { sum += v, squares += v * v, ++n; }
  double mean() const { return n ? sum / static_cast<double>(n) : 0.0; }
  double std() const { return n ? std::sqrt(std::max(0.0, squares / static_cast<double>(n) - mean() * mean())) : 0.0; }
};

// Each epoch's order depends on the seed and the epoch alone, so (epoch, position) is the whole cursor.
std::vector<size_t> task_order(size_t n, uint64_t seed, int epoch) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

std::string folder_name(const std::string& task_id) {
  std::string out = task_id;
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

// What a rank's tasks of one step produced, as every rank needs it: episodes by their task's place
// in the step's batch, the admitted skills, and the counts behind the metrics.
struct RankHarvest {
  std::map<size_t, agents::Episode> episodes;
  std::vector<skills::Skill> admitted;
  size_t proposed = 0, verified = 0, solved = 0;
};

nlohmann::json to_json(const RankHarvest& h) {
  nlohmann::json episodes = nlohmann::json::array(), admitted = nlohmann::json::array();
  for (const auto& [index, e] : h.episodes) episodes.push_back({{"index", index}, {"episode", agents::to_json(e)}});
  for (const auto& skill : h.admitted) admitted.push_back(skills::to_json(skill));
  return {{"episodes", episodes}, {"admitted", admitted}, {"proposed", h.proposed}, {"verified", h.verified}, {"solved", h.solved}};
}

// Every rank's harvest merged, in the batch's task order.
RankHarvest gather(RankHarvest mine, const DataParallel& parallel) {
  if (parallel.world_size() == 1) return mine;
  RankHarvest all;
  for (const auto& text : parallel.all_gather(to_json(mine).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))) {
    const auto j = nlohmann::json::parse(text);
    for (const auto& e : j.at("episodes")) all.episodes.emplace(e.at("index").get<size_t>(), agents::episode_from_json(e.at("episode")));
    for (const auto& skill : j.at("admitted")) all.admitted.push_back(skills::skill_from_json(skill));
    all.proposed += j.at("proposed").get<size_t>();
    all.verified += j.at("verified").get<size_t>();
    all.solved += j.at("solved").get<size_t>();
  }
  return all;
}

}  // namespace

void train_coevolution(llm::TrainableBackbone& backbone, agents::KernelEvaluator& evaluator, const agents::Prompts& prompts,
                       skills::SkillStore& store, std::span<const eval::Task> tasks, const CoevolutionConfig& config,
                       const CoevolutionRun& run, const std::function<void(const CoevolutionMetrics&)>& on_step,
                       const agents::ProgressFn& progress, const DataParallel& parallel) {
  if (tasks.empty()) throw std::invalid_argument("co-evolution: no tasks");
  const size_t per_step = std::min<size_t>(std::max(1, config.tasks_per_step), tasks.size());
  std::string ids;
  for (const auto& t : tasks) ids += t.id + "\n";
  const std::string task_hash = core::content_hash(ids);
  AdamW optimizer(backbone.trainable_parameters(), config.optimizer);
  const fs::path checkpoints = run.out / "checkpoints";

  int epoch = 1;
  size_t position = 0;
  int64_t done = 0;
  if (run.resume) {
    if (const auto latest = latest_checkpoint(checkpoints)) {
      const auto state = load_checkpoint(*latest, backbone, optimizer);
      if (state.value("tasks", std::string()) != task_hash)
        throw std::runtime_error(fmt::format("{}: the task suite differs from the one this run was trained on", latest->string()));
      epoch = state.at("epoch").get<int>();
      position = state.at("position").get<size_t>();
      done = state.at("step").get<int64_t>();
      if (progress) progress(fmt::format("resumed from step {} ({})", done, latest->string()));
    }
  }

  // Every rank starts from rank 0's weights (a LoRA adapter's random start included).
  parallel.broadcast_(backbone.trainable_parameters());
  const bool main = parallel.is_main();
  const std::string who = parallel.world_size() > 1 ? fmt::format("rank {}: ", parallel.rank()) : std::string();

  TimedBackbone timed_model(backbone);
  TimedEvaluator timed_evaluator(evaluator);
  for (int64_t step = done + 1; step <= config.steps; ++step) {
    const auto step_start = Clock::now();
    timed_model.seconds = timed_evaluator.seconds = 0;
    std::vector<const eval::Task*> batch;
    while (batch.size() < per_step) {
      batch.push_back(&tasks[task_order(tasks.size(), config.seed, epoch)[position]]);
      if (++position == tasks.size()) ++epoch, position = 0;
    }
    // The library as the last flush before this step left it; before any flush, the store as it is
    // (its seed skills). A resumed run thus sees its checkpoint's library, not skills admitted by
    // steps it is about to redo.
    const auto snapshot = store.snapshot_at(step - 1);
    const skills::Library library(snapshot ? store.load(*snapshot) : store.list(skills::Status::admitted));

    RankHarvest harvest;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (static_cast<int>(i % static_cast<size_t>(parallel.world_size())) != parallel.rank()) continue;
      const eval::Task& task = *batch[i];
      agents::PolicyTask policy_task{task, core::read_file(task.file),
                                     run.out / "candidates" / fmt::format("step-{}", step) / folder_name(task.id)};
      fs::create_directories(policy_task.candidates_dir);
      agents::OptimizeSettings settings = config.agents;
      settings.seed = config.seed * 1000003 + static_cast<uint64_t>(step) * 1009 + i;
      if (progress) progress(fmt::format("{}step {}: task {}/{}: {}", who, step, i + 1, batch.size(), task.id));
      auto outcome = agents::optimize(timed_model, timed_evaluator, prompts, library, policy_task, settings, progress);
      for (const auto& s : outcome.summaries) harvest.proposed += s.proposals.size();
      harvest.verified += outcome.verifications.size();
      for (auto& s : agents::admitted_skills(outcome)) harvest.admitted.push_back(std::move(s));
      if (const auto* best = outcome.best_turn(); best && best->speedup() > 1.0) ++harvest.solved;
      harvest.episodes.emplace(i, std::move(outcome.episode));
    }
    harvest = gather(std::move(harvest), parallel);
    const size_t proposed = harvest.proposed, verified = harvest.verified, solved = harvest.solved;
    std::vector<agents::Episode> episodes;
    for (auto& [index, e] : harvest.episodes) episodes.push_back(std::move(e));
    if (main) {
      for (auto& s : harvest.admitted) store.stage(std::move(s));
      std::string lines;
      for (const auto& e : episodes) lines += agents::to_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      core::write_file_atomic(run.out / "episodes" / fmt::format("step-{}.jsonl", step), lines);
    }

    // The mixed batch; PRS thins correct policy turns whose kernels do little of the work.
    const auto built = training_samples(episodes, config.samples);
    std::mt19937_64 rng(config.seed * 1000003 + static_cast<uint64_t>(step));
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<TrainingSample> kept;
    size_t prs_rejected = 0;
    std::map<std::string, Moments> reward, length;
    for (const auto& s : built.samples) {
      const std::string role = agents::role_name(s.role);
      reward[role].add(s.reward);
      length[role].add(static_cast<double>(s.rollout_logprobs.size()));
      if (config.prs && s.role == agents::Role::policy && !prs_keep(s.correct, s.coverage, uniform(rng), config.prs_config)) {
        ++prs_rejected;
        continue;
      }
      kept.push_back(s);
    }
    std::vector<TrainingSample> share;
    std::vector<int64_t> lengths;
    for (const auto& s : kept) lengths.push_back(static_cast<int64_t>(s.ids.size()));
    for (const size_t i : rank_share(lengths, parallel.rank(), parallel.world_size())) share.push_back(kept[i]);
    const auto train_start = Clock::now();
    const auto update = policy_step(backbone, optimizer, share, config.update, parallel);
    const double train_seconds = since(train_start);
    const auto slowest = parallel.max({timed_model.seconds, timed_evaluator.seconds});
    double flops = 0;  // forward and backward of every sequence of the update
    if (run.model)
      for (const auto& s : kept) {
        const auto [per_token, per_projected] = llm::training_flops(*run.model, static_cast<int64_t>(s.ids.size()));
        flops += per_token * static_cast<double>(s.ids.size()) + per_projected * static_cast<double>(s.rollout_logprobs.size());
      }
    // Rank 0 writes the snapshot; the others read it at the next step, so they wait for it here.
    const auto flushed = main ? store.flush(step) : skills::FlushOutcome{};
    parallel.barrier();

    CoevolutionMetrics m = {{"step", step},
                            {"epoch", epoch},
                            {"tasks", batch.size()},
                            {"fast_1", static_cast<double>(solved) / static_cast<double>(batch.size())},
                            {"samples", built.samples.size()},
                            {"trained_samples", kept.size()},
                            {"untrainable_calls", built.untrainable},
                            {"pg_loss", update.loss},
                            {"clip_fraction_low", update.clip_fraction_low},
                            {"clip_fraction_high", update.clip_fraction_high},
                            {"grad_norm", update.optimizer.grad_norm},
                            {"lr", update.optimizer.lr},
                            {"logprob_diff", update.mean_abs_logprob_diff},
                            {"entropy", update.mean_entropy},
                            {"mrs_rejected", update.mrs_rejected},
                            {"prs_rejected", prs_rejected},
                            {"skills_proposed", proposed},
                            {"skills_verified", verified},
                            {"skills_admitted", flushed.admissions.size()},
                            {"library_size", flushed.skills_in_snapshot},
                            {"train_tokens", update.tokens},
                            {"tokens_per_s", train_seconds > 0 ? static_cast<double>(update.tokens) / train_seconds : 0.0},
                            {"mfu", train_seconds > 0 ? flops / train_seconds /
                                                            (config.peak_tflops * 1e12 * parallel.world_size()) : 0.0},
                            {"ranks", parallel.world_size()},
                            {"generate_s", slowest[0]},
                            {"evaluate_s", slowest[1]},
                            {"train_s", train_seconds}};
    for (const char* role : {"policy", "selection", "summary"}) {
      m[fmt::format("reward_mean_{}", role)] = reward[role].mean();
      m[fmt::format("reward_std_{}", role)] = reward[role].std();
      m[fmt::format("response_tokens_{}", role)] = length[role].mean();
    }
    const bool last = step == config.steps;
    if (main && (last || (config.checkpoint_every > 0 && step % config.checkpoint_every == 0)))
      save_checkpoint(checkpoints, step, backbone, optimizer,
                      {{"epoch", epoch},
                       {"position", position},
                       {"tasks", task_hash},
                       {"skills_snapshot", flushed.step},
                       {"library", store.path().string()},
                       {"kind", "coevolution"}});
    m["step_s"] = since(step_start);
    if (main && on_step) on_step(m);
  }
}

}  // namespace vinci::rl
