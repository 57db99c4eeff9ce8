// RL learns (issue 6's learning test): in a synthetic environment with a programmatic reward and a
// known optimum, the real training step (sampled rollouts with their logprobs, GRPO advantages,
// PPO-clip, AdamW; src/train/policy_step) must raise the mean reward of the tiny random Qwen2 fixture
// clearly above where it starts, within a bounded number of steps, on the CPU.
//
// Reward: the share of the 8 generated tokens whose id is below 512, half of the model's 1024 rows,
// so a random model starts near 0.5 and the optimum is 1. Measured here (mean reward of the 16
// rollouts, by step): 0.52 0.51 0.54 0.73 0.71 0.84 0.84 0.97 1.00 0.98 1.00 1.00.
#include <gtest/gtest.h>

#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm_native/native_backbone.h"
#include "rl/advantage.h"
#include "train/policy_step.h"

namespace rl_learning_test {

constexpr int kSteps = 12, kGroup = 16, kNewTokens = 8;

double reward_of(const std::vector<int32_t>& tokens) {
  return static_cast<double>(std::count_if(tokens.begin(), tokens.end(), [](int32_t t) { return t < 512; })) /
         static_cast<double>(tokens.size());
}

TEST(RlLearning, TheTrainingStepRaisesAProgrammaticReward) {
  const auto fixtures = std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";
  vinci::llm::NativeOptions options;
  options.device = "cpu";
  options.dtype = "float32";
  options.training.mode = vinci::llm::Training::Mode::full;
  auto backbone = vinci::llm::open_native_backbone(fixtures / "models/qwen2", options);
  const auto golden = nlohmann::json::parse(vinci::core::read_file(fixtures / "models/qwen2/golden.json"));
  const auto prompt = golden["prompts"][1].get<std::vector<int32_t>>();

  vinci::train::AdamWConfig adam;
  adam.lr.peak = 2e-2;  // 3e-3 does not move it in 12 steps; 1e-2 to 3e-2 reach 0.9 or more
  vinci::train::AdamW optimizer(backbone->trainable_parameters(), adam);
  vinci::train::PolicyStepConfig step_config;
  vinci::rl::AdvantageConfig advantage;
  advantage.policy_estimator = vinci::rl::Estimator::grpo;

  std::vector<double> mean_reward;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<vinci::llm::GenerationRequest> requests(kGroup);
    for (int i = 0; i < kGroup; ++i) {
      requests[i].prompt_ids = prompt;
      requests[i].sampling.temperature = 1.0;
      requests[i].sampling.max_new_tokens = kNewTokens;
      requests[i].sampling.ignore_eos = true;
      requests[i].sampling.seed = static_cast<uint64_t>(1000 * step + i);
    }
    const auto results = backbone->generate(requests);
    std::vector<vinci::rl::TrainingSample> samples(kGroup);
    std::vector<vinci::rl::PolicySample> scored;
    double total = 0;
    for (int i = 0; i < kGroup; ++i) {
      auto& s = samples[i];
      s.task = "synthetic";
      s.ids = prompt;
      s.ids.insert(s.ids.end(), results[i].token_ids.begin(), results[i].token_ids.end());
      s.loss_mask.assign(prompt.size(), 0);
      s.loss_mask.resize(s.ids.size(), 1);
      s.rollout_logprobs = results[i].logprobs;
      s.reward = reward_of(results[i].token_ids);
      scored.push_back({s.task, 0, s.reward});
      total += s.reward;
    }
    mean_reward.push_back(total / kGroup);
    const auto advantages = vinci::rl::policy_advantages(scored, advantage);
    for (int i = 0; i < kGroup; ++i) samples[i].advantage = advantages[i];
    const auto stats = vinci::train::policy_step(*backbone, optimizer, samples, step_config);
    // On-policy: the sampler's logprobs are the trainer's, so MRS keeps everything.
    EXPECT_EQ(stats.mrs_rejected, 0u) << "step " << step << ": |diff| " << stats.mean_abs_logprob_diff;
  }
  const double start = (mean_reward[0] + mean_reward[1]) / 2;
  const double end = (mean_reward[kSteps - 1] + mean_reward[kSteps - 2] + mean_reward[kSteps - 3]) / 3;
  std::string curve;
  for (double r : mean_reward) curve += fmt::format("{:.2f} ", r);
  fmt::print(stderr, "mean reward by step: {}\n", curve);
  EXPECT_GT(end, start + 0.25) << "mean reward by step: " << curve;
  EXPECT_GT(end, 0.8) << "mean reward by step: " << curve;
}

}  // namespace rl_learning_test
