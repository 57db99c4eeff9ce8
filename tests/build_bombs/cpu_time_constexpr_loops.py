# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/build_cpu_time
# vinci-devices: cpu
"""Time bomb at build time: 4096 compile-time evaluations of a nested loop, each just under GCC's
own limit on constexpr operations (about 1 s of cc1plus each, so about an hour in all), in a few
kilobytes of source and a flat 20 MB of memory. Stopped by the limit on CPU time per build process
(--compile-cpu, 600 s by default; the rlimit a few seconds above it is the stop behind the trusted
side's watch). Where the wall-clock limit (--compile-timeout) comes first, it ends as build_timeout:
run this file with a CPU limit well below the wall-clock one."""
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

# The 4,096 evaluations are a preprocessor doubling, written here (a build's sources must be lines the
# file writes); __COUNTER__ gives each its own seed, so GCC cannot reuse one evaluation's result.
_SPIN = """
constexpr int spin(int seed) {
  int x = seed;
  for (int i = 0; i < 1000; ++i)
    for (int j = 0; j < 1000; ++j) x = (x + j) & 255;
  return x;
}
#define SPIN1 static_assert(spin(__COUNTER__) >= 0, "");
#define SPIN2 SPIN1 SPIN1
#define SPIN4 SPIN2 SPIN2
#define SPIN8 SPIN4 SPIN4
#define SPIN16 SPIN8 SPIN8
#define SPIN32 SPIN16 SPIN16
#define SPIN64 SPIN32 SPIN32
#define SPIN128 SPIN64 SPIN64
#define SPIN256 SPIN128 SPIN128
#define SPIN512 SPIN256 SPIN256
#define SPIN1024 SPIN512 SPIN512
#define SPIN2048 SPIN1024 SPIN1024
#define SPIN4096 SPIN2048 SPIN2048
SPIN4096
""" + _RELU


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="vinci_bomb_constexpr", cpp_sources=_SPIN, functions=["relu"],
                               extra_cflags=["-O2"], verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
