#include "train/adamw.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vinci::train {

AdamW::AdamW(std::vector<at::Tensor> parameters, AdamWConfig config) : params_(std::move(parameters)), config_(config) {
  for (const auto& p : params_) {
    if (!p.is_floating_point()) throw std::invalid_argument("AdamW: a parameter is not floating point");
    m_.push_back(at::zeros_like(p));
    v_.push_back(at::zeros_like(p));
  }
}

StepStats AdamW::step() {
  const c10::NoGradGuard no_grad;
  StepStats stats;
  stats.step = ++steps_;
  stats.lr = rl::learning_rate(config_.lr, steps_);
  std::vector<size_t> live;
  std::vector<at::Tensor> grads;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].grad().defined()) {
      live.push_back(i);
      grads.push_back(params_[i].grad());
    }
  if (live.empty()) return stats;
  // One norm kernel per list and one host sync per step, not one per parameter.
  stats.grad_norm = at::stack(at::_foreach_norm(grads)).to(at::kDouble).norm().item<double>();
  // Clipping divides the gradients inside the fused kernel (its grad_scale, meant for AMP's
  // unscaling), which saves a pass over every gradient.
  const bool clip = config_.max_grad_norm > 0 && stats.grad_norm > config_.max_grad_norm;
  const double clip_divisor = clip ? (stats.grad_norm + 1e-6) / config_.max_grad_norm : 1.0;
  // PyTorch's fused AdamW kernel (one launch per device and dtype), with this step's count.
  std::map<std::pair<std::string, at::ScalarType>, std::vector<size_t>> groups;
  for (size_t k = 0; k < live.size(); ++k)
    groups[{params_[live[k]].device().str(), params_[live[k]].scalar_type()}].push_back(k);
  for (const auto& [key, members] : groups) {
    std::vector<at::Tensor> p, g, m, v, step;
    const auto count = at::full({}, static_cast<double>(steps_), params_[live[members[0]]].options().dtype(at::kFloat));
    for (const size_t k : members) {
      p.push_back(params_[live[k]]);
      g.push_back(grads[k]);
      m.push_back(m_[live[k]]);
      v.push_back(v_[live[k]]);
      step.push_back(count);
    }
    std::optional<at::Tensor> grad_scale;
    if (clip) grad_scale = at::full({}, clip_divisor, count.options());
    at::_fused_adamw_(p, g, m, v, {}, step, stats.lr, config_.beta1, config_.beta2, config_.weight_decay, config_.eps,
                      /*amsgrad=*/false, /*maximize=*/false, grad_scale, std::nullopt);
  }
  for (const size_t i : live) params_[i].mutable_grad().reset();
  return stats;
}

std::map<std::string, at::Tensor> AdamW::state() const {
  std::map<std::string, at::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    out[fmt::format("m.{}", i)] = m_[i];
    out[fmt::format("v.{}", i)] = v_[i];
  }
  out["step"] = at::tensor({steps_}, at::kLong);
  return out;
}

void AdamW::load_state(const std::map<std::string, at::Tensor>& state) {
  const auto get = [&](const std::string& key, const at::Tensor& like) {
    const auto it = state.find(key);
    if (it == state.end()) throw std::invalid_argument(fmt::format("optimizer state: '{}' is missing", key));
    if (like.defined() && it->second.sizes() != like.sizes())
      throw std::invalid_argument(fmt::format("optimizer state: '{}' has shape {}, the parameter {}", key,
                                              fmt::join(it->second.sizes(), "x"), fmt::join(like.sizes(), "x")));
    return it->second;
  };
  const c10::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    m_[i].copy_(get(fmt::format("m.{}", i), m_[i]));
    v_[i].copy_(get(fmt::format("v.{}", i), v_[i]));
  }
  steps_ = get("step", {}).item<int64_t>();
}

}  // namespace vinci::train
