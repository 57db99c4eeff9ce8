"""SwiGLU gate: silu(x W1^T) * (x W3^T), both projections without bias."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 2048
HIDDEN = 5632
SCALABLE = ("BATCH", "DIM", "HIDDEN")


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return F.silu(self.w1(x)) * self.w3(x)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
