"""Sum over dimension 1 of a 3-D tensor (keepdim=False): (B, R, C) -> (B, C)."""
import torch
import torch.nn as nn

BATCH = 192
REDUCE = 4096
COLS = 1024
SCALABLE = ("BATCH", "REDUCE", "COLS")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(BATCH, REDUCE, COLS)]


def get_init_inputs():
    return []
