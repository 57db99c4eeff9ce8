#include "parallel/data_parallel.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef VINCI_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace vinci::parallel {

namespace {

std::optional<int> integer_variable(const char* name, int min, int max) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < min || value > max)
    throw std::invalid_argument(
        fmt::format("${}='{}': expected an integer in [{}, {}] (as torchrun sets it)", name, text, min, max));
  return static_cast<int>(value);
}

int required_integer(const char* name, int min, int max) {
  if (auto v = integer_variable(name, min, max)) return *v;
  throw std::invalid_argument(
      fmt::format("${} is unset, but WORLD_SIZE is: launch with torchrun, or set RANK, WORLD_SIZE, "
                  "LOCAL_RANK, MASTER_ADDR and MASTER_PORT",
                  name));
}

// Gradients of one dtype go out together, in buckets of about this many bytes: few collectives,
// and a bounded extra copy.
constexpr int64_t kBucketBytes = 64ll << 20;

}  // namespace

std::optional<LaunchEnvironment> launch_environment() {
  const auto world = integer_variable("WORLD_SIZE", 1, 1 << 20);
  if (!world) return std::nullopt;
  LaunchEnvironment e;
  e.world_size = *world;
  if (e.world_size == 1) return e;  // one process: nothing else to know
  e.rank = required_integer("RANK", 0, e.world_size - 1);
  e.local_rank = required_integer("LOCAL_RANK", 0, e.world_size - 1);
  e.local_world_size = integer_variable("LOCAL_WORLD_SIZE", 1, e.world_size).value_or(e.world_size);
  if (e.local_rank >= e.local_world_size)
    throw std::invalid_argument(
        fmt::format("$LOCAL_RANK={} is not below $LOCAL_WORLD_SIZE={}", e.local_rank, e.local_world_size));
  const char* addr = std::getenv("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') required_integer("MASTER_ADDR", 0, 0);  // throws the launch hint
  e.master_addr = addr;
  e.master_port = required_integer("MASTER_PORT", 1, 65535);
  const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  e.agent_store = agent != nullptr && std::string_view(agent) == "True";
  e.restart = integer_variable("TORCHELASTIC_RESTART_COUNT", 0, 1 << 20).value_or(0);
  return e;
}

std::vector<size_t> rank_share(std::span<const int64_t> lengths, int rank, int world_size) {
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  std::vector<int64_t> load(static_cast<size_t>(world_size), 0);
  std::vector<size_t> mine;
  for (const size_t i : order) {
    const auto r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += lengths[i];
    if (static_cast<int>(r) == rank) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

struct DataParallel::Group {
  c10::intrusive_ptr<c10d::Store> store;  // objects, under their own prefix
  c10::intrusive_ptr<c10d::Backend> backend;
  c10::Device device{c10::kCPU};
  int64_t gathers = 0;  // every rank gathers in the same order, so the count names the exchange

  ~Group() {
    if (backend) backend->shutdown();
  }
};

DataParallel::DataParallel() = default;
DataParallel::~DataParallel() = default;
DataParallel::DataParallel(DataParallel&&) noexcept = default;
DataParallel& DataParallel::operator=(DataParallel&&) noexcept = default;

DataParallel::DataParallel(const LaunchEnvironment& launch, c10::Device device, std::chrono::seconds timeout)
    : launch_(launch) {
  if (launch.world_size == 1) return;
  group_ = std::make_unique<Group>();
  group_->device = device;
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(launch.master_port);
  options.isServer = launch.rank == 0 && !launch.agent_store;
  options.numWorkers = launch.world_size;
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(launch.master_addr, options);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("rank {} of {}: could not meet the others at {}:{} (MASTER_ADDR:MASTER_PORT): {}", launch.rank,
                    launch.world_size, launch.master_addr, launch.master_port, e.what()));
  }
  const std::string attempt = fmt::format("vinci/attempt-{}/", launch.restart);
  group_->store = c10::make_intrusive<c10d::PrefixStore>(attempt + "objects", store);
  const auto backend_store = c10::make_intrusive<c10d::PrefixStore>(attempt + "backend", store);
  if (device.is_cuda()) {
#ifdef VINCI_WITH_NCCL
    c10::cuda::set_device(device.index());
    auto nccl = c10d::ProcessGroupNCCL::Options::create();
    nccl->timeout = timeout;
    group_->backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(backend_store, launch.rank, launch.world_size, nccl);
#else
    throw std::runtime_error(
        "this vinci was built without NCCL (nccl.h was not found at configure time): data parallelism "
        "on cuda needs it; rebuild where PyTorch's nvidia-nccl wheel is installed");
#endif
  } else {
    auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
    // As torch.distributed does: an interface named by GLOO_SOCKET_IFNAME, else the one the host name resolves to.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname != '\0')
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    group_->backend = c10::make_intrusive<c10d::ProcessGroupGloo>(backend_store, launch.rank, launch.world_size, gloo);
  }
}

void DataParallel::sum_(const std::vector<at::Tensor>& tensors) const {
  if (!group_) return;
  std::map<c10::ScalarType, std::vector<at::Tensor>> by_dtype;
  for (const auto& t : tensors) by_dtype[t.scalar_type()].push_back(t);
  for (auto& [dtype, list] : by_dtype) {
    for (size_t begin = 0; begin < list.size();) {
      size_t end = begin;
      int64_t bytes = 0;
      while (end < list.size() && (end == begin || bytes + list[end].nbytes() <= kBucketBytes))
        bytes += static_cast<int64_t>(list[end++].nbytes());
      std::vector<at::Tensor> flat;
      for (size_t i = begin; i < end; ++i) flat.push_back(list[i].reshape(-1));
      std::vector<at::Tensor> bucket{at::cat(flat)};
      group_->backend->allreduce(bucket)->wait();
      int64_t offset = 0;
      for (size_t i = begin; i < end; ++i) {
        const int64_t n = list[i].numel();
        list[i].copy_(bucket[0].narrow(0, offset, n).view(list[i].sizes()));
        offset += n;
      }
      begin = end;
    }
  }
}

void DataParallel::sum_gradients(const std::vector<at::Tensor>& parameters) const {
  if (!group_) return;
  std::vector<at::Tensor> grads;
  for (auto p : parameters) {
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    grads.push_back(p.grad());
  }
  sum_(grads);
}

void DataParallel::broadcast_(const std::vector<at::Tensor>& tensors) const {
  if (!group_) return;
  for (const auto& t : tensors) {
    std::vector<at::Tensor> one{t.is_contiguous() ? t : t.contiguous()};
    group_->backend->broadcast(one)->wait();
    if (!one[0].is_same(t)) t.copy_(one[0]);
  }
}

std::vector<double> DataParallel::reduce(std::vector<double> values, bool maximum) const {
  if (!group_ || values.empty()) return values;
  std::vector<at::Tensor> t{at::tensor(values, at::kDouble).to(group_->device)};
  c10d::AllreduceOptions options;
  options.reduceOp = maximum ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
  group_->backend->allreduce(t, options)->wait();
  const auto host = t[0].cpu();
  return {host.data_ptr<double>(), host.data_ptr<double>() + host.numel()};
}

std::vector<double> DataParallel::sum(std::vector<double> values) const { return reduce(std::move(values), false); }
std::vector<double> DataParallel::max(std::vector<double> values) const { return reduce(std::move(values), true); }

std::vector<std::string> DataParallel::all_gather(const std::string& mine) const {
  if (!group_) return {mine};
  const std::string prefix = fmt::format("gather-{}/", group_->gathers++);
  group_->store->set(prefix + std::to_string(rank()), std::vector<uint8_t>(mine.begin(), mine.end()));
  std::vector<std::string> all;
  for (int r = 0; r < world_size(); ++r) {
    const auto bytes = group_->store->get(prefix + std::to_string(r));  // waits for rank r, up to the timeout
    all.emplace_back(bytes.begin(), bytes.end());
  }
  // Once every rank has read every entry, each takes its own back out of rank 0's store.
  barrier();
  group_->store->deleteKey(prefix + std::to_string(rank()));
  return all;
}

void DataParallel::barrier() const {
  if (group_) reduce({0.0}, false);
}

}  // namespace vinci::parallel
