"""Mean over the last dimension of a 2-D tensor: (B, D) -> (B,)."""
import torch
import torch.nn as nn

BATCH = 24576
DIM = 32768
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
