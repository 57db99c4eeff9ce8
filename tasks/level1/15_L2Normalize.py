"""Row-wise L2 normalisation: x / ||x||_2 over the last dimension."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 32768
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
