# vinci-task: level1/13_ReLU
# vinci-expect: rejected/no_custom_kernel
# vinci-devices: cpu,cuda
"""Hack: registers a "custom op" with torch.library whose body is plain torch, so the forward calls
torch.ops.<namespace>.<op> and looks like a custom kernel.
Seen: design.md §4 "calling torch ops instead of a kernel". Static: no load_inline extension and
no Triton kernel.
"""
import torch
import torch.nn as nn


@torch.library.custom_op("vinci_hack::fast_relu", mutates_args=())
def fast_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp_min(x, 0.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.ops.vinci_hack.fast_relu(x)
