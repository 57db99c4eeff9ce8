// The central difference of a scalar loss in one parameter element, the truth gradient tests
// compare autograd against: (loss(x + eps) - loss(x - eps)) / 2 eps, the element restored after.
#pragma once

#include <cstdint>
#include <functional>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace vinci::test {

inline double central_difference(at::Tensor flat, int64_t index, const std::function<at::Tensor()>& loss,
                                 double eps = 1e-6) {
  c10::NoGradGuard no_grad;
  const double saved = flat[index].item<double>();
  flat[index].fill_(saved + eps);
  const double plus = loss().item<double>();
  flat[index].fill_(saved - eps);
  const double minus = loss().item<double>();
  flat[index].fill_(saved);
  return (plus - minus) / (2 * eps);
}

}  // namespace vinci::test
