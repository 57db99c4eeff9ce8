// Decode throughput of the native backbone on a randomly initialised model of a given shape
// (speed does not depend on the weights' values). Prints one JSON line per batch size:
// prefill time, decode tokens/s, and the batch-1 share of the memory-bandwidth roofline
// (weight bytes per step over the measured device copy bandwidth).
//
//   llm_decode_bench --config-dir benchmarks/llm/qwen2_5_7b --batch 1,16,64 --prompt 512 --new 256
//
// --profile-new N instead runs one batch-1 generation of N new tokens inside cudaProfilerStart/Stop,
// for `ncu --profile-from-start off` (benchmarks/decode_profile_gpu.sh) to see it and nothing else;
// --kineto-new N runs one under the Kineto profiler and prints its costliest kernels and how busy
// the GPU was (its prefill included: a small share when N is large).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kineto_kernels.h"
#include "llm_native/native_backbone.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void synchronize(const at::Tensor& t) { (void)t.sum().item<double>(); }

// Device-to-device copy bandwidth, counting the bytes read and written, best of several runs.
double copy_bandwidth(at::Device device) {
  auto src = at::empty({int64_t{1} << 30}, at::TensorOptions().dtype(at::kByte).device(device)).fill_(1);
  auto dst = at::empty_like(src);
  dst.copy_(src);
  synchronize(dst);
  double best = 1e30;
  for (int i = 0; i < 10; ++i) {
    auto start = Clock::now();
    dst.copy_(src);
    synchronize(dst.narrow(0, 0, 1));
    best = std::min(best, seconds_since(start));
  }
  return 2.0 * static_cast<double>(src.numel()) / best;
}

// libcudart's own profiler switches, from the copy libtorch loaded: the benchmark does not link the
// CUDA runtime itself.
using ProfilerSwitch = int (*)();
ProfilerSwitch profiler_switch(const char* name) { return reinterpret_cast<ProfilerSwitch>(dlsym(RTLD_DEFAULT, name)); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"decode throughput of the native backbone"};
  std::string config_dir, device = "auto", batches = "1,16,64";
  int prompt = 512, new_tokens = 256, repeats = 3;
  app.add_option("--config-dir", config_dir, "a directory with config.json")->required();
  app.add_option("--device", device);
  app.add_option("--batch", batches, "comma-separated batch sizes");
  app.add_option("--prompt", prompt);
  app.add_option("--new", new_tokens);
  app.add_option("--repeats", repeats, "runs per measurement; the median is reported");
  bool eager = false;
  app.add_flag("--no-cuda-graphs", eager, "launch every decode step's kernels one by one");
  int profile_new = 0;
  app.add_option("--profile-new", profile_new,
                 "only one batch-1 generation of this many new tokens, between cudaProfilerStart and Stop")
      ->check(CLI::PositiveNumber);
  int kineto_new = 0, top = 25;
  app.add_option("--kineto-new", kineto_new,
                 "only one batch-1 generation of this many new tokens, under the Kineto profiler: its --top "
                 "costliest kernels")
      ->check(CLI::PositiveNumber);
  app.add_option("--top", top, "kernels listed by --kineto-new")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  vinci::llm::NativeOptions options;
  options.device = device;
  options.cuda_graphs = !eager;
  options.random_weights_seed = 1;
  auto load_start = Clock::now();
  auto backbone = vinci::llm::open_native_backbone(config_dir, options);
  double weight_bytes = 0;
  const auto config = nlohmann::json::parse(std::ifstream(std::filesystem::path(config_dir) / "config.json"));
  fmt::print(stderr, "model ready in {:.1f} s\n", seconds_since(load_start));
  const bool cuda = options.device != "cpu" && at::hasCUDA();

  std::mt19937 rng(0);
  std::uniform_int_distribution<int32_t> token(0, config["vocab_size"].get<int32_t>() - 1);
  auto run = [&](int batch, int max_new) {
    std::vector<vinci::llm::GenerationRequest> requests(batch);
    for (auto& r : requests) {
      for (int i = 0; i < prompt; ++i) r.prompt_ids.push_back(token(rng));
      r.sampling.greedy = true;
      r.sampling.ignore_eos = true;
      r.sampling.max_new_tokens = max_new;
    }
    auto start = Clock::now();
    auto results = backbone->generate(requests);
    return seconds_since(start);
  };
  auto median = [&](int batch, int max_new) {
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) times.push_back(run(batch, max_new));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  // Bytes a batch-1 decode step must read: every weight once (the embedding only one row).
  const int64_t h = config["hidden_size"], inter = config["intermediate_size"], layers = config["num_hidden_layers"];
  const int64_t heads = config["num_attention_heads"], kv = config["num_key_value_heads"], vocab = config["vocab_size"];
  const int64_t head_dim = config.value("head_dim", h / heads);
  const double per_layer = double(h) * (heads + 2 * kv) * head_dim + double(heads) * head_dim * h + 3.0 * h * inter;
  weight_bytes = 2.0 * (layers * per_layer + double(vocab) * h);  // bf16

  run(1, 4);  // warm-up: allocator, kernels' first launch
  if (profile_new > 0) {
    const ProfilerSwitch start = profiler_switch("cudaProfilerStart"), stop = profiler_switch("cudaProfilerStop");
    if (!cuda || !start || !stop) {
      fmt::print(stderr, "--profile-new needs a GPU and libcudart's cudaProfilerStart in the process\n");
      return 1;
    }
    start();
    const double seconds = run(1, profile_new);
    stop();
    fmt::print("{}\n", nlohmann::json{{"profiled_new_tokens", profile_new}, {"seconds", seconds}}.dump());
    return 0;
  }
  if (kineto_new > 0) {
    if (!cuda) {
      fmt::print(stderr, "--kineto-new needs a GPU\n");
      return 1;
    }
    const auto marker = at::zeros({1}, at::TensorOptions().device(at::kCUDA));
    vinci::bench::print_kernel_profile(
        stdout, fmt::format("batch-1 generation of {} tokens", kineto_new), [&] { run(1, kineto_new); },
        [&] { synchronize(marker); }, top);
    return 0;
  }
  const double bandwidth = copy_bandwidth(cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU));
  std::stringstream list(batches);
  std::string item;
  while (std::getline(list, item, ',')) {
    const int batch = std::stoi(item);
    const double prefill = median(batch, 1);
    const double total = median(batch, new_tokens);
    const double decode = total - prefill;
    const double step = decode / (new_tokens - 1);
    nlohmann::json line = {{"engine", eager ? "vinci eager" : "vinci"},
                           {"batch", batch},
                           {"prompt", prompt},
                           {"new_tokens", new_tokens},
                           {"prefill_s", prefill},
                           {"total_s", total},
                           {"decode_s", decode},
                           {"decode_tokens_per_s", batch * (new_tokens - 1) / decode},
                           {"step_ms", step * 1e3},
                           {"copy_bandwidth_GBps", bandwidth / 1e9},
                           {"weight_GB", weight_bytes / 1e9},
                           {"roofline_share", (weight_bytes / bandwidth) / step}};
    fmt::print("{}\n", line.dump());
    std::fflush(stdout);
  }
  return 0;
}
