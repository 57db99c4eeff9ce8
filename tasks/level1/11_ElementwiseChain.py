"""A chain of elementwise ops over three tensors: relu(x * y + z) * 0.5."""
import torch
import torch.nn as nn

BATCH = 8192
DIM = 16384
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, z):
        return torch.relu(x * y + z) * 0.5


def get_inputs():
    return [torch.rand(BATCH, DIM), torch.rand(BATCH, DIM), torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
