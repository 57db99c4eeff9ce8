"""Reference CPU solution for level1/6_RMSNorm: per row, double-precision mean of squares,
then x * rsqrt(mean + eps) * weight."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor rmsnorm_cpu(torch::Tensor x, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous(), "rmsnorm: inputs must be contiguous");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D, "rmsnorm: bad weight shape");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += (double)xr[i] * xr[i];
    const float inv = (float)(1.0 / std::sqrt(s / D + eps));
    for (int64_t i = 0; i < D; ++i) yr[i] = xr[i] * inv * Wt[i];
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_6_rmsnorm", cpp_sources=_CPP_SRC, functions=["rmsnorm_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        return _ext.rmsnorm_cpu(x.contiguous(), self.weight, self.eps)
