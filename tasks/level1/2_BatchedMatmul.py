"""Batched matrix product: C[b] = A[b] @ B[b] (A: BATCH x M x K, B: BATCH x K x N)."""
import torch
import torch.nn as nn

BATCH = 32
M = 1024
K = 2048
N = 1024
SCALABLE = ("M", "K", "N")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.rand(BATCH, M, K), torch.rand(BATCH, K, N)]


def get_init_inputs():
    return []
