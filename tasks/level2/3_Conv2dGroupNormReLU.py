"""3x3 convolution (padding 1, bias), GroupNorm with affine parameters, then ReLU."""
import torch
import torch.nn as nn

BATCH = 16
C_IN = 64
GROUPS = 8
CH_PER_GROUP = 16  # C_OUT = GROUPS * CH_PER_GROUP
H = 192
W = 192
KERNEL = 3
SCALABLE = {"BATCH": 1, "C_IN": 1, "CH_PER_GROUP": 1, "H": KERNEL, "W": KERNEL}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.GroupNorm(num_groups, out_channels, eps=1e-5, affine=True)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.rand(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, GROUPS * CH_PER_GROUP, KERNEL, GROUPS]
