# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/build_output_size
# vinci-devices: cpu
"""Output bomb at build time: one line beside an honest ReLU declares a 1 GiB initialised array, which the
assembler writes out as a 1 GiB data section (and the linker would copy into a 1 GiB library in
the extension cache). Stopped by the limit on any one file a build writes (RLIMIT_FSIZE, the
library's own limit, --compile-output, 512 MiB by default): the assembler is killed half-way,
inside the build's private tmpfs, and nothing reaches the cache."""
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

__attribute__((used)) static char table[1 << 30] = {1};
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="vinci_bomb_data_section", cpp_sources=_RELU, functions=["relu"],
                               extra_cflags=["-O2"], verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
