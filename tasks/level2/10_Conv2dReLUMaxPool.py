"""3x3 convolution (padding 1, bias), ReLU, then 2x2 max pooling with stride 2."""
import torch
import torch.nn as nn

BATCH = 32
C_IN = 32
C_OUT = 64
H = 256
W = 256
KERNEL = 3
POOL = 2
SCALABLE = {"BATCH": 1, "C_IN": 1, "C_OUT": 1, "H": KERNEL + POOL, "W": KERNEL + POOL}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(pool)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.rand(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KERNEL, POOL]
