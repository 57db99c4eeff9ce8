# vinci-task: level1/13_ReLU
# vinci-expect: compile_error/build_memory
# vinci-devices: cpu
"""Memory bomb at build time: the extension's source includes a character device, so the compiler
reads an endless file of zeros into memory (cc1plus held 4 GB within 10 s on the 2-core machine).
Stopped by the trusted side, which sums the resident memory of the build's process tree and kills
it past its limit (--compile-memory, 8 GiB by default); the rlimit on address space is the stop
behind it. The include comes first, so no torch header is parsed before it."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="vinci_bomb_dev_zero", cpp_sources='#include "/dev/zero"\n',
                               functions=["relu"], no_implicit_headers=True, extra_cflags=["-O2"], verbose=False)

    def forward(self, x):
        return self.ext.relu(x)
