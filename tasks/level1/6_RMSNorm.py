"""RMSNorm over the last dimension: x * rsqrt(mean(x^2) + eps) * weight."""
import torch
import torch.nn as nn

BATCH = 16384
DIM = 32768
EPS = 1e-6
SCALABLE = ("BATCH", "DIM")


class Model(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        # Random (not all-ones) weight, so that a kernel ignoring it is caught.
        self.weight = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inv_rms * self.weight


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [DIM, EPS]
