"""Reference CPU solution for level1/7_SumReduction: for each batch entry, accumulate the rows
of dimension 1 into a double-precision buffer of columns."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <algorithm>
#include <vector>

torch::Tensor sum_dim1_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous(), "sum_dim1: expected a contiguous 3-D tensor");
  const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
  auto y = torch::empty({B, C}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  std::vector<double> acc(C);
  for (int64_t b = 0; b < B; ++b) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t r = 0; r < R; ++r) {
      const float* row = X + (b * R + r) * C;
      for (int64_t c = 0; c < C; ++c) acc[c] += row[c];
    }
    for (int64_t c = 0; c < C; ++c) Y[b * C + c] = (float)acc[c];
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_7_sumreduction", cpp_sources=_CPP_SRC, functions=["sum_dim1_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.sum_dim1_cpu(x.contiguous())
