// Does data parallelism give the update one process gives? Run under torchrun with N ranks:
//
//   torchrun --standalone --nproc-per-node 2 --no-python data_parallel_check --model DIR --device cuda
//
// Every rank builds the same global batch (random ids, varied lengths, rollout logprobs off the
// model's own by noise, so ratios clip), trains one policy step on its share (parallel::rank_share)
// through parallel::DataParallel, and the ranks check that they hold identical weights afterwards. Rank 0
// then restores the starting weights, takes the same step alone over the whole batch, and compares:
// the summed gradient and the weight update, each as ||dp - single|| / ||single|| over all
// trainable parameters, and the loss. Exits 1 when a tolerance is exceeded; --report writes JSON.
// --noise-floor measures the rounding floor to set bf16 tolerances by: one process against itself
// with a different micro-batching.
#include <chrono>
#include <optional>
#include <random>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "llm/model_config.h"
#include "llm_native/native_backbone.h"
#include "parallel/data_parallel.h"
#include "train/policy_step.h"

namespace {

using namespace vinci;

// fp32 copies in host memory (a 1.5B model's fit several times over).
std::vector<at::Tensor> host_copies(const std::vector<at::Tensor>& tensors, bool grads) {
  std::vector<at::Tensor> out;
  for (const auto& t : tensors) out.push_back((grads ? t.grad() : t).detach().to(at::kCPU, at::kFloat, false, true));
  return out;
}

// ||a - b|| / ||b|| over every tensor together, in double.
double relative_error(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i].to(at::kDouble) - b[i].to(at::kDouble)).pow(2).sum().item<double>();
    norm += b[i].to(at::kDouble).pow(2).sum().item<double>();
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::vector<at::Tensor> minus(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(a[i].to(at::kDouble) - b[i].to(at::kDouble));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"2 ranks against 1: the data-parallel policy step's gradient and update"};
  std::string model, device = "auto", dtype = "auto", report;
  bool random_weights = false;
  int batch = 8, min_length = 48, max_length = 96, lora_rank = 0;
  int64_t micro_batch_tokens = 256;
  double grad_tolerance = 1e-5, update_tolerance = 1e-3, noise = 0.05;
  app.add_option("--model", model, "a checkpoint directory (or, with --random-weights, one holding config.json)")
      ->required();
  app.add_flag("--random-weights", random_weights, "draw the weights at random (seed 1) instead of reading them");
  app.add_option("--device", device, "auto, cpu or cuda: each rank takes cuda:LOCAL_RANK")->capture_default_str();
  app.add_option("--dtype", dtype, "auto, float32 or bfloat16")->capture_default_str();
  app.add_option("--batch", batch, "sequences in the global batch")->capture_default_str();
  app.add_option("--min-length", min_length)->capture_default_str();
  app.add_option("--max-length", max_length)->capture_default_str();
  app.add_option("--micro-batch-tokens", micro_batch_tokens)->capture_default_str();
  app.add_option("--lora-rank", lora_rank, "0: every parameter trained")->capture_default_str();
  app.add_option("--noise", noise, "std of the rollout logprobs' offset from the model's")->capture_default_str();
  app.add_option("--grad-tolerance", grad_tolerance)->capture_default_str();
  app.add_option("--update-tolerance", update_tolerance)->capture_default_str();
  app.add_option("--report", report, "write the comparison as JSON here (rank 0)");
  bool noise_floor = false;
  app.add_flag("--noise-floor", noise_floor,
               "also step one process with half the micro-batch tokens; each tolerance becomes at least twice "
               "that run's distance from the reference (bf16's rounding floor)");
  CLI11_PARSE(app, argc, argv);

  const auto launch = parallel::launch_environment().value_or(parallel::LaunchEnvironment{});
  llm::NativeOptions options;
  options.device = llm::local_rank_device(device, launch.local_rank);
  options.dtype = dtype;
  if (random_weights) options.random_weights_seed = 1;
  options.training.mode = lora_rank > 0 ? llm::Training::Mode::lora : llm::Training::Mode::full;
  options.training.lora.rank = lora_rank;
  auto backbone = llm::open_native_backbone(model, options);
  const parallel::DataParallel parallel(launch, backbone->trainable_parameters().front().device(),
                                        std::chrono::seconds(600));
  parallel.broadcast_(backbone->trainable_parameters());

  // The global batch, the same on every rank.
  const auto vocab = llm::load_model_config(model).vocab_size;
  std::mt19937 rng(0);
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(vocab) - 1);
  std::uniform_int_distribution<int> length(min_length, max_length);
  std::normal_distribution<float> offset(0.0f, static_cast<float>(noise));
  std::vector<rl::TrainingSample> samples(static_cast<size_t>(batch));
  for (int b = 0; b < batch; ++b) {
    auto& s = samples[static_cast<size_t>(b)];
    const int n = length(rng);
    for (int i = 0; i < n; ++i) s.ids.push_back(token(rng));
    s.loss_mask.assign(static_cast<size_t>(n / 2), 0);
    s.loss_mask.resize(static_cast<size_t>(n), 1);
    s.advantage = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  }
  {
    c10::NoGradGuard no_grad;
    for (auto& s : samples) {
      const auto lp = backbone->logprobs({{{s.ids, s.loss_mask}}}, {}).to(at::kFloat).cpu().contiguous();
      for (int64_t i = 0; i < lp.numel(); ++i) s.rollout_logprobs.push_back(lp.data_ptr<float>()[i] + offset(rng));
    }
  }
  train::PolicyStepConfig step;
  step.mrs = false;  // the noise would drop sequences; which ones is not what is compared
  step.micro_batch_tokens = micro_batch_tokens;
  train::AdamWConfig adam;
  adam.lr.peak = 1e-4;
  adam.max_grad_norm = 0;  // clipping scales by the norm: compared on its own, below

  const bool main = parallel.is_main();
  std::vector<at::Tensor> start;  // rank 0's copy of the starting weights, for the reference
  if (main) start = host_copies(backbone->trainable_parameters(), false);
  std::vector<rl::TrainingSample> share;
  std::vector<int64_t> lengths;
  for (const auto& s : samples) lengths.push_back(static_cast<int64_t>(s.ids.size()));
  for (const size_t i : parallel::rank_share(lengths, parallel.rank(), parallel.world_size()))
    share.push_back(samples[i]);
  train::PolicyStepStats dp;
  std::vector<at::Tensor> dp_grads, dp_weights;
  {
    train::AdamW optimizer(backbone->trainable_parameters(), adam);
    dp = train::accumulate_policy_gradient(*backbone, share, step, parallel);
    if (main) dp_grads = host_copies(backbone->trainable_parameters(), true);
    dp.optimizer = optimizer.step();
  }
  // Identical weights on every rank: the same summed gradient and the same AdamW arithmetic.
  double checksum = 0;
  for (const auto& w : backbone->trainable_parameters())
    checksum += w.detach().to(at::kDouble).abs().sum().item<double>();
  if (main) dp_weights = host_copies(backbone->trainable_parameters(), false);
  const double spread = parallel.max({checksum})[0] + parallel.max({-checksum})[0];
  fmt::print(stderr, "rank {}: {} of {} sequences, {} micro-batches, weight checksum {:.17g}\n", parallel.rank(),
             share.size(), samples.size(), dp.micro_batches, checksum);
  parallel.barrier();
  if (!main) {
    parallel.barrier();  // while rank 0 computes the reference
    return 0;
  }

  // One process over the whole batch, from the same start.
  auto params = backbone->trainable_parameters();
  struct Single {
    train::PolicyStepStats stats;
    std::vector<at::Tensor> grads, weights;
  };
  const auto single_process = [&](int64_t micro_tokens) {
    {
      c10::NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(start[i]);
    }
    train::AdamW optimizer(params, adam);
    train::PolicyStepConfig config = step;
    config.micro_batch_tokens = micro_tokens;
    Single out;
    out.stats = train::accumulate_policy_gradient(*backbone, samples, config);
    out.grads = host_copies(params, true);
    out.stats.optimizer = optimizer.step();
    out.weights = host_copies(params, false);
    return out;
  };
  const auto reference = single_process(micro_batch_tokens);
  const auto& single = reference.stats;
  const auto& single_grads = reference.grads;
  const auto& single_weights = reference.weights;
  // The floor: how far one process moves from itself when only the micro-batching changes (which
  // sequences share a forward). In bf16 that alone changes the rounding, as the ranks' deal does.
  std::optional<std::pair<double, double>> floor;
  if (noise_floor) {
    const auto other = single_process(std::max<int64_t>(1, micro_batch_tokens / 2));
    floor = {relative_error(other.grads, single_grads),
             relative_error(minus(other.weights, start), minus(single_weights, start))};
    grad_tolerance = std::max(grad_tolerance, 2 * floor->first);
    update_tolerance = std::max(update_tolerance, 2 * floor->second);
  }
  parallel.barrier();

  const double grad_error = relative_error(dp_grads, single_grads);
  const double update_error = relative_error(minus(dp_weights, start), minus(single_weights, start));
  const double loss_error = std::abs(dp.loss - single.loss) / std::max(1e-12, std::abs(single.loss));
  double grad_norm = 0;
  for (const auto& g : single_grads) grad_norm += g.pow(2).sum().item<double>();
  const bool ok = grad_error <= grad_tolerance && update_error <= update_tolerance && spread == 0.0;
  const nlohmann::json result = {{"ranks", parallel.world_size()},
                                 {"device", options.device},
                                 {"dtype", dtype},
                                 {"sequences", samples.size()},
                                 {"tokens", single.tokens},
                                 {"trainable_parameters",
                                  [&] {
                                    int64_t n = 0;
                                    for (const auto& p : params) n += p.numel();
                                    return n;
                                  }()},
                                 {"loss_single", single.loss},
                                 {"loss_data_parallel", dp.loss},
                                 {"loss_relative_error", loss_error},
                                 {"grad_norm", std::sqrt(grad_norm)},
                                 {"grad_relative_error", grad_error},
                                 {"update_relative_error", update_error},
                                 {"clip_fraction_low", single.clip_fraction_low},
                                 {"clip_fraction_high", single.clip_fraction_high},
                                 {"ranks_agree", spread == 0.0},
                                 {"floor_grad_relative_error", floor ? floor->first : 0.0},
                                 {"floor_update_relative_error", floor ? floor->second : 0.0},
                                 {"grad_tolerance", grad_tolerance},
                                 {"update_tolerance", update_tolerance},
                                 {"ok", ok}};
  if (!report.empty()) core::write_file_atomic(report, result.dump(2) + "\n");
  fmt::print("{:<26} {:>14}\n", "", fmt::format("{} ranks vs 1", parallel.world_size()));
  fmt::print("{:<26} {:>14.6g}\n", "loss (1 rank)", single.loss);
  fmt::print("{:<26} {:>14.3e}\n", "loss relative error", loss_error);
  fmt::print("{:<26} {:>14.3e}  (tolerance {:.1e})\n", "gradient relative error", grad_error, grad_tolerance);
  fmt::print("{:<26} {:>14.3e}  (tolerance {:.1e})\n", "update relative error", update_error, update_tolerance);
  if (floor) {
    fmt::print("{:<26} {:>14.3e}  (1 rank, half the micro-batch)\n", "gradient floor", floor->first);
    fmt::print("{:<26} {:>14.3e}  (1 rank, half the micro-batch)\n", "update floor", floor->second);
  }
  fmt::print("{:<26} {:>14}\n", "ranks hold equal weights", spread == 0.0 ? "yes" : "NO");
  fmt::print("{}\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
