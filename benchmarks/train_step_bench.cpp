// Throughput of the policy-gradient step (train/policy_step: logprobs forward, PPO-clip loss,
// backward, AdamW) on a randomly initialised model of a given shape, every parameter trained in
// bf16 compute with fp32 master weights. Prints one JSON line: tokens/s and MFU. Under torchrun
// each rank steps on a batch of its own and the gradients are summed (parallel/data_parallel): tokens/s
// is then all ranks', and MFU per GPU.
//
// FLOPs per step, the usual accounting: 6 x (non-embedding parameters) per token for the matmuls of
// forward and backward, 6 x hidden x vocab per trained (masked) token for the output projection
// (only those positions reach it), and 6 x layers x hidden x seq per token for causal attention
// (QK^T and AV, half the square, forward and backward).
//
//   train_step_bench --config-dir benchmarks/llm/qwen2_5_1_5b --batch 8 --prompt 512 --response 512
#include <algorithm>
#include <chrono>
#include <random>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kineto_kernels.h"
#include "llm/model_config.h"
#include "llm_native/native_backbone.h"
#include "parallel/data_parallel.h"
#include "train/policy_step.h"

int main(int argc, char** argv) {
  CLI::App app{"throughput of the policy-gradient training step"};
  std::string config_dir, device = "cuda";
  int batch = 8, prompt = 512, response = 512, steps = 5, warmup = 2;
  double peak_tflops = 989.0;  // H100 SXM dense bf16
  bool checkpointing = false;
  int pack_rows = 0;
  app.add_option("--config-dir", config_dir, "a directory with config.json")->required();
  app.add_option("--device", device);
  app.add_option("--batch", batch);
  app.add_option("--prompt", prompt, "untrained tokens per sequence");
  app.add_option("--response", response, "trained tokens per sequence");
  app.add_option("--steps", steps, "timed steps (the median is reported)");
  app.add_option("--warmup", warmup);
  app.add_option("--peak-tflops", peak_tflops, "the device's dense bf16 peak, for MFU");
  app.add_flag("--gradient-checkpointing", checkpointing);
  app.add_option("--pack-rows", pack_rows,
                 "pack the sequences into rows of this many tokens, each attending within itself (0: one "
                 "padded row each)");
  int profile_top = 0;
  app.add_option("--profile", profile_top,
                 "after timing, profile one more step and list its N costliest GPU kernels (stderr)");
  CLI11_PARSE(app, argc, argv);

  const auto launch = vinci::parallel::launch_environment().value_or(vinci::parallel::LaunchEnvironment{});
  vinci::llm::NativeOptions options;
  options.device = launch.world_size > 1 ? vinci::llm::local_rank_device(device, launch.local_rank) : device;
  options.dtype = "bfloat16";
  options.random_weights_seed = 1;
  options.training.mode = vinci::llm::Training::Mode::full;
  options.training.gradient_checkpointing = checkpointing;
  auto backbone = vinci::llm::open_native_backbone(config_dir, options);
  const auto config = vinci::llm::load_model_config(config_dir);
  const vinci::parallel::DataParallel parallel(launch, backbone->trainable_parameters().front().device(),
                                               std::chrono::seconds(600));
  const int64_t vocab = config.vocab_size;
  std::mt19937 rng(static_cast<uint32_t>(parallel.rank()));
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(vocab) - 1);
  std::vector<vinci::rl::TrainingSample> samples(batch);
  for (int b = 0; b < batch; ++b) {
    auto& s = samples[b];
    for (int i = 0; i < prompt + response; ++i) s.ids.push_back(token(rng));
    s.loss_mask.assign(prompt, 0);
    s.loss_mask.resize(prompt + response, 1);
    s.advantage = b % 2 ? 1.0 : -1.0;
  }
  {  // on-policy rollout logprobs: the model's own, so ratios start at 1
    c10::NoGradGuard no_grad;
    for (auto& s : samples) {
      const auto lp = backbone->logprobs({{{s.ids, s.loss_mask}}}, {}).to(at::kFloat).cpu().contiguous();
      s.rollout_logprobs.assign(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
    }
  }
  vinci::train::AdamWConfig adam;
  adam.lr.peak = 1e-6;
  vinci::train::AdamW optimizer(backbone->trainable_parameters(), adam);
  vinci::train::PolicyStepConfig step;
  step.micro_batch_tokens = 0;         // the whole batch in one forward and backward
  step.logprobs.pack = pack_rows > 0;  // equal lengths: unpacked, the rows need no padding
  step.logprobs.max_tokens_per_row = pack_rows;
  step.mrs = false;  // the weights move between steps; the timing must not depend on it

  const bool cuda = device != "cpu";
  const auto sync = [&] {
    if (cuda) (void)backbone->trainable_parameters().front().sum().item<double>();
  };
  std::vector<double> times;
  for (int i = 0; i < warmup + steps; ++i) {
    sync();
    const auto start = std::chrono::steady_clock::now();
    vinci::train::policy_step(*backbone, optimizer, samples, step, parallel);
    sync();
    if (i >= warmup) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (profile_top > 0 && cuda)
    vinci::bench::print_kernel_profile(
        stderr, "profiled step", [&] { vinci::train::policy_step(*backbone, optimizer, samples, step); }, sync,
        profile_top);
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double ranks = parallel.world_size();
  const double tokens = ranks * batch * (prompt + response), trained = ranks * batch * response;
  const auto [per_token, per_projected] = vinci::llm::training_flops(config, prompt + response);
  const double flops = per_token * tokens + per_projected * trained;
  nlohmann::json line = {{"engine", pack_rows > 0 ? fmt::format("vinci-pack{}", pack_rows) : "vinci"},
                         {"batch", batch},
                         {"prompt", prompt},
                         {"response", response},
                         {"step_s", median},
                         {"tokens_per_s", tokens / median},
                         {"tflops", flops / median / 1e12},
                         {"mfu", flops / median / (ranks * peak_tflops * 1e12)}};
  if (parallel.world_size() > 1) line["ranks"] = parallel.world_size();
  if (parallel.is_main()) fmt::print("{}\n", line.dump());
  return 0;
}
