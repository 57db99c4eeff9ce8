"""Reference CPU solution for level1/5_LayerNorm: per row, double-precision mean and centred
variance, then (x - mean) * rstd * weight + bias."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor layernorm_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "layernorm: inputs must be contiguous");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D && b.numel() == D, "layernorm: bad parameter shapes");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += xr[i];
    const double mean = s / D;
    double q = 0.0;
    for (int64_t i = 0; i < D; ++i) q += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(q / D + eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (float)((xr[i] - mean) * rstd * Wt[i] + Bs[i]);
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_5_layernorm", cpp_sources=_CPP_SRC, functions=["layernorm_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=1e-5, elementwise_affine=True)

    def forward(self, x):
        return _ext.layernorm_cpu(x.contiguous(), self.ln.weight, self.ln.bias, self.ln.eps)
