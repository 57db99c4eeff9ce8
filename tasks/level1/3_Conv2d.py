"""2-D convolution, 3x3 kernel, stride 1, padding 1, with bias (NCHW)."""
import torch
import torch.nn as nn

BATCH = 16
C_IN = 64
C_OUT = 128
H = 224
W = 224
KERNEL = 3
PADDING = 1
SCALABLE = {"BATCH": 1, "C_IN": 1, "C_OUT": 1, "H": KERNEL, "W": KERNEL}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=True)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KERNEL, PADDING]
