// Data parallelism across processes, launched like torchrun.
//
// Data parallelism across processes, launched like torchrun: RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT name this process's place. Ranks meet at a c10d
// TCPStore that rank 0 serves, and reduce tensors through a c10d process group: NCCL when the model
// is on a GPU, Gloo on the CPU. Small objects (episodes, skills) travel through the store.
//
// Every rank calls every collective in the same order; a rank with nothing to contribute still
// calls it (with zeros), or the others wait on it until the timeout.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace vinci::parallel {

struct LaunchEnvironment {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;  // within this host
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // torchrun's agent already serves the store at MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE): every
  // rank joins it as a client. A restarted attempt keys its entries apart from the failed one's.
  bool agent_store = false;
  int restart = 0;
};

// torchrun's variables, or nullopt when WORLD_SIZE is unset (a single process). Throws
// std::invalid_argument naming the variable that is missing or malformed.
std::optional<LaunchEnvironment> launch_environment();

// Deals sequences out to ranks, longest first to the rank with the fewest tokens so far: the
// indices of `rank`'s share, in order. Every rank computes the same deal.
std::vector<size_t> rank_share(std::span<const int64_t> lengths, int rank, int world_size);

class DataParallel {
 public:
  // A single process: every collective is the identity.
  DataParallel();
  // Joins the group (blocks until every rank has joined). The backend follows the device: NCCL for
  // cuda, Gloo for cpu. timeout bounds every wait on another rank.
  DataParallel(const LaunchEnvironment& launch, c10::Device device, std::chrono::seconds timeout);
  ~DataParallel();
  DataParallel(DataParallel&&) noexcept;
  DataParallel& operator=(DataParallel&&) noexcept;

  int rank() const { return launch_.rank; }
  int world_size() const { return launch_.world_size; }
  bool is_main() const { return launch_.rank == 0; }
  const LaunchEnvironment& launch() const { return launch_; }

  // Sums same-device tensors over the ranks, in place (flattened into buckets per dtype).
  void sum_(const std::vector<at::Tensor>& tensors) const;
  // Sums the parameters' gradients over the ranks. A parameter without a gradient on this rank
  // (its sequences all dropped, or none dealt to it) gets zeros first: every rank must send one.
  void sum_gradients(const std::vector<at::Tensor>& parameters) const;
  // Rank 0's values into every rank's tensors, in place.
  void broadcast_(const std::vector<at::Tensor>& tensors) const;
  std::vector<double> sum(std::vector<double> values) const;
  std::vector<double> max(std::vector<double> values) const;
  // Every rank's text, in rank order.
  std::vector<std::string> all_gather(const std::string& mine) const;
  void barrier() const;

 private:
  struct Group;
  std::vector<double> reduce(std::vector<double> values, bool maximum) const;
  LaunchEnvironment launch_;
  std::unique_ptr<Group> group_;
};

}  // namespace vinci::parallel
