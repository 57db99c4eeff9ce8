"""Per-channel bias add on an NCHW tensor, tanh, then multiplication by a constant."""
import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 256
H = 128
W = 128
SCALE = 2.0
SCALABLE = ("H", "W")


class Model(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.rand(channels, 1, 1) - 0.5)
        self.scale = scale

    def forward(self, x):
        return torch.tanh(x + self.bias) * self.scale


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, H, W) * 2.0 - 1.0]


def get_init_inputs():
    return [CHANNELS, SCALE]
