"""Reference CPU solution for level1/8_MaxReduction: for each batch entry, a running maximum
over the rows of dimension 1."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

torch::Tensor max_dim1_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous() && x.size(1) > 0, "max_dim1: expected a contiguous 3-D tensor");
  const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
  auto y = torch::empty({B, C}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    float* out = Y + b * C;
    const float* first = X + b * R * C;
    for (int64_t c = 0; c < C; ++c) out[c] = first[c];
    for (int64_t r = 1; r < R; ++r) {
      const float* row = X + (b * R + r) * C;
      for (int64_t c = 0; c < C; ++c) out[c] = row[c] > out[c] ? row[c] : out[c];
    }
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_8_maxreduction", cpp_sources=_CPP_SRC, functions=["max_dim1_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.max_dim1_cpu(x.contiguous())
