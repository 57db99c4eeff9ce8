"""Maximum values over dimension 1 of a 3-D tensor: (B, R, C) -> (B, C)."""
import torch
import torch.nn as nn

BATCH = 384
REDUCE = 2048
COLS = 1024
SCALABLE = ("BATCH", "REDUCE", "COLS")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.max(x, dim=1).values


def get_inputs():
    return [torch.rand(BATCH, REDUCE, COLS)]


def get_init_inputs():
    return []
