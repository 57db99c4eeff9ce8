"""2-D transpose, returned as a contiguous tensor: (M, N) -> (N, M)."""
import torch
import torch.nn as nn

M = 16384
N = 32768
SCALABLE = ("M", "N")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.t().contiguous()


def get_inputs():
    return [torch.rand(M, N)]


def get_init_inputs():
    return []
