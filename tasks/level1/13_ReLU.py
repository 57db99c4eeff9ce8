"""ReLU: max(x, 0) elementwise. Inputs are shifted to [-0.5, 0.5) so both branches occur."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 32768
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(BATCH, DIM) - 0.5]


def get_init_inputs():
    return []
