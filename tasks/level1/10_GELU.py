"""Exact (erf-based) GELU: 0.5 * x * (1 + erf(x / sqrt(2)))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 32768
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="none")


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
