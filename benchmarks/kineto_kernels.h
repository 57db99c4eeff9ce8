// GPU time by kernel for one piece of work under the Kineto profiler, and how much of the work's
// wall time the GPU was busy: the benches' --profile tables (train_step_bench, llm_decode_bench).
// Kineto runs wherever PyTorch's profiler does, on machines where ncu cannot read counters too.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <torch/csrc/autograd/profiler_kineto.h>

namespace vinci::bench {

// Runs work() between sync()s under the profiler and prints, to out, a header line ("<what>: wall,
// GPU busy") and the `top` kernels by GPU time, with their share and launch count.
template <typename Work, typename Sync>
void print_kernel_profile(std::FILE* out, const std::string& what, Work&& work, Sync&& sync, int top) {
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  const std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
  profiler::prepareProfiler(config, activities);
  sync();
  profiler::enableProfiler(config, activities);
  const auto start = std::chrono::steady_clock::now();
  work();
  sync();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto result = profiler::disableProfiler();
  std::map<std::string, std::pair<double, int>> kernels;
  double busy = 0;
  for (const auto& e : result->events()) {
    if (e.deviceType() != c10::DeviceType::CUDA) continue;
    // Elementwise kernels differ only in their template arguments (the functor), so those stay;
    // the argument list goes.
    std::string name = e.name();
    for (const std::string noise : {"void ", "at::native::", "(anonymous namespace)::", "at_cuda_detail::"})
      for (size_t at = name.find(noise); at != std::string::npos; at = name.find(noise)) name.erase(at, noise.size());
    if (const auto cut = name.find('('); cut != std::string::npos && cut > 0) name.resize(cut);
    if (name.size() > 150) name.resize(150);
    auto& [seconds, count] = kernels[name];
    seconds += static_cast<double>(e.durationNs()) * 1e-9;
    ++count;
    busy += static_cast<double>(e.durationNs()) * 1e-9;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> sorted(kernels.begin(), kernels.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print(out, "{}: {:.1f} ms wall, GPU busy {:.1f} ms ({:.0f}%), {} kernel names\n", what, wall * 1e3, busy * 1e3,
             100 * busy / wall, kernels.size());
  fmt::print(out, "{:>9} {:>6} {:>6}  kernel\n", "ms", "share", "calls");
  for (int i = 0; i < top && i < static_cast<int>(sorted.size()); ++i)
    fmt::print(out, "{:>9.2f} {:>5.1f}% {:>6}  {}\n", sorted[i].second.first * 1e3, 100 * sorted[i].second.first / busy,
               sorted[i].second.second, sorted[i].first);
}

}  // namespace vinci::bench
