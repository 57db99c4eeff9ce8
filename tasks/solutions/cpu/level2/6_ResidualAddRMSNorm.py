"""Reference CPU solution for level2/6_ResidualAddRMSNorm: per row, h = x + residual, a
double-precision mean of h^2, then h * rsqrt(mean + eps) * weight."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor add_rmsnorm_cpu(torch::Tensor x, torch::Tensor res, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && res.is_contiguous() && w.is_contiguous(), "inputs must be contiguous");
  TORCH_CHECK(x.sizes() == res.sizes(), "x and residual differ in shape");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D, "bad weight shape");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Rs = res.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) {
      const float h = X[r * D + i] + Rs[r * D + i];
      s += (double)h * h;
    }
    const float inv = (float)(1.0 / std::sqrt(s / D + eps));
    for (int64_t i = 0; i < D; ++i) {
      const float h = X[r * D + i] + Rs[r * D + i];
      Y[r * D + i] = h * inv * Wt[i];
    }
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level2_6_residualaddrmsnorm", cpp_sources=_CPP_SRC, functions=["add_rmsnorm_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim))

    def forward(self, x, residual):
        return _ext.add_rmsnorm_cpu(x.contiguous(), residual.contiguous(), self.weight, self.eps)
