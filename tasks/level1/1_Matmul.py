"""C = A @ B for square-ish fp32 matrices (A: M x K, B: K x N)."""
import torch
import torch.nn as nn

M = 4096
K = 4096
N = 4096
SCALABLE = ("M", "K", "N")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
