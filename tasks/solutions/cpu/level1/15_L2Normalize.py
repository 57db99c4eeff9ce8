"""Reference CPU solution for level1/15_L2Normalize: per row, a double-precision sum of
squares, then x / sqrt(sum)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor l2norm_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "l2norm: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += (double)X[r * D + i] * X[r * D + i];
    const float norm = (float)std::sqrt(s);
    for (int64_t i = 0; i < D; ++i) Y[r * D + i] = X[r * D + i] / norm;
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_15_l2normalize", cpp_sources=_CPP_SRC, functions=["l2norm_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.l2norm_cpu(x.contiguous())
