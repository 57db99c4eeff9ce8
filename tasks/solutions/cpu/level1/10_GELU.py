"""Reference CPU solution for level1/10_GELU: 0.5 * x * (1 + erf(x / sqrt(2))) per element."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor gelu_cpu(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "gelu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float v = X[i];
    Y[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level1_10_gelu", cpp_sources=_CPP_SRC, functions=["gelu_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.gelu_cpu(x.contiguous())
