# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/forbidden_flag
# vinci-devices: cpu
"""Smuggles a compiler plugin past nvcc: -Xcompiler hands its comma-separated list to the host
compiler, here with -fplugin= naming a library that would run inside cc1plus. The list is split
and every item checked against the host compiler's allow-list before any build starts, so it is
refused on a machine without nvcc as on one with it (python/vinci_worker/build_limits.py)."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_RELU = r"""
#include <torch/extension.h>

torch::Tensor relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* b = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="vinci_bomb_xcompiler", cpp_sources=_RELU, functions=["relu"],
                               extra_cuda_cflags=["-O3", "-Xcompiler", "-fopenmp,-fplugin=/tmp/plugin.so"],
                               verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
