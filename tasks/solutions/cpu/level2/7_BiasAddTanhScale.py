"""Reference CPU solution for level2/7_BiasAddTanhScale: tanh(x + bias[c]) * scale per element."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <cmath>

torch::Tensor bias_tanh_scale_cpu(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.dim() == 4 && x.is_contiguous() && bias.is_contiguous(), "expected a contiguous NCHW tensor");
  const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
  TORCH_CHECK(bias.numel() == C, "bad bias shape");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Bs = bias.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const float s = (float)scale;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t base = (n * C + c) * HW;
      for (int64_t i = 0; i < HW; ++i) Y[base + i] = std::tanh(X[base + i] + Bs[c]) * s;
    }
  return y;
}
"""

_ext = load_inline(name="cpu_level2_7_biasaddtanhscale", cpp_sources=_CPP_SRC, functions=["bias_tanh_scale_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.rand(channels, 1, 1) - 0.5)
        self.scale = scale

    def forward(self, x):
        return _ext.bias_tanh_scale_cpu(x.contiguous(), self.bias, self.scale)
