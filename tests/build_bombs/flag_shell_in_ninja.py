# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/forbidden_flag
# vinci-devices: cpu
"""Runs a shell command at build time without any compiler option: torch writes the flags unquoted
into build.ninja, whose commands /bin/sh runs, so a define whose value holds ';' ends the compiler's
command and starts another. Refused before any build starts: flags may hold only letters, digits and
_.,+=/[]- (python/vinci_worker/build_limits.py)."""
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
        self.ext = load_inline(name="vinci_bomb_ninja_shell", cpp_sources=_RELU, functions=["relu"],
                               extra_cflags=["-O2", "-DBLOCK=256;(yes>/dev/null&);true"], verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
