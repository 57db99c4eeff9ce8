#include "rl/adamw.h"

#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vinci::rl {

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
  stats.lr = learning_rate(config_.lr, steps_);
  // The global norm over every gradient, accumulated in fp64.
  double squares = 0;
  for (const auto& p : params_)
    if (p.grad().defined()) squares += p.grad().to(at::kDouble).pow(2).sum().item<double>();
  stats.grad_norm = std::sqrt(squares);
  const double clip = config_.max_grad_norm > 0 && stats.grad_norm > config_.max_grad_norm
                          ? config_.max_grad_norm / (stats.grad_norm + 1e-6)
                          : 1.0;
  const double correction1 = 1.0 - std::pow(config_.beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(config_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (!p.grad().defined()) continue;
    const auto g = p.grad() * clip;
    m_[i].mul_(config_.beta1).add_(g, 1.0 - config_.beta1);
    v_[i].mul_(config_.beta2).addcmul_(g, g, 1.0 - config_.beta2);
    if (config_.weight_decay != 0.0) p.mul_(1.0 - stats.lr * config_.weight_decay);
    const auto denominator = (v_[i] / correction2).sqrt_().add_(config_.eps);
    p.addcdiv_(m_[i], denominator, -stats.lr / correction1);
    p.mutable_grad().reset();
  }
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

}  // namespace vinci::rl
