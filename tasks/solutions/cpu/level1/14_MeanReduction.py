"""Reference CPU solution for level1/14_MeanReduction: per row, a double-precision sum divided
by the row length."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor mean_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "mean: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty({R}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += X[r * D + i];
    Y[r] = (float)(s / D);
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_14_meanreduction", cpp_sources=_CPP_SRC, functions=["mean_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.mean_cpu(x.contiguous())
