"""C = A @ B in fp16 (A: M x K, B: K x N, both torch.float16; C is float16)."""
import torch
import torch.nn as nn

M = 8192
K = 8192
N = 8192
SCALABLE = ("M", "K", "N")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K).half(), torch.rand(K, N).half()]


def get_init_inputs():
    return []
