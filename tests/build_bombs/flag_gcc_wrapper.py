# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/forbidden_flag
# vinci-devices: cpu
"""Runs a program of its own at build time through the compiler's command line: gcc's -wrapper runs
the named program around every compiler pass (here a shell that would first start a busy process,
then run the pass). Refused before any build starts: extra_cflags must match the allow-list of
optimisation, code-generation, define, warning, include and library flags
(python/vinci_worker/build_limits.py)."""
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
        self.ext = load_inline(name="vinci_bomb_wrapper", cpp_sources=_RELU, functions=["relu"],
                               extra_cflags=["-O2", "-wrapper", "/bin/sh,-c,(yes >/dev/null &);exec \"$0\" \"$@\""],
                               verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
