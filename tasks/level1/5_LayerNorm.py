"""nn.LayerNorm over the last dimension, with elementwise affine weight and bias."""
import torch
import torch.nn as nn

BATCH = 32768
DIM = 16384
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=1e-5, elementwise_affine=True)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
