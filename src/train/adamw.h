// AdamW over the backbone's trainable parameters, with global-norm clipping and the LR schedule.
//
// AdamW over the backbone's trainable parameters (fp32 master weights when the compute dtype is
// bf16: the backbone keeps them so), with gradient clipping by global norm and the learning-rate
// schedule. The update is PyTorch's fused AdamW kernel; the state around it is ours, plain named
// tensors, which a checkpoint saves and restores exactly.
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p = p (1 - lr wd) - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "rl/lr_schedule.h"

namespace vinci::train {

struct AdamWConfig {
  rl::LrSchedule lr;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
  double max_grad_norm = 1.0;  // 0: no clipping
};

struct StepStats {
  double grad_norm = 0;  // before clipping
  double lr = 0;
  int64_t step = 0;
};

class AdamW {
 public:
  AdamW(std::vector<at::Tensor> parameters, AdamWConfig config);

  // Clips, updates every parameter that has a gradient, and clears the gradients.
  StepStats step();
  int64_t steps() const { return steps_; }

  // "m.<i>", "v.<i>" per parameter and "step": what a checkpoint stores.
  std::map<std::string, at::Tensor> state() const;
  // Throws std::invalid_argument naming a missing or mis-shaped entry.
  void load_state(const std::map<std::string, at::Tensor>& state);

 private:
  std::vector<at::Tensor> params_, m_, v_;
  AdamWConfig config_;
  int64_t steps_ = 0;
};

}  // namespace vinci::train
