"""Single-head scaled dot-product attention: softmax(Q K^T / sqrt(d)) V (no mask, no dropout)."""
import math

import torch
import torch.nn as nn

BATCH = 32
SEQ = 2048
HEAD_DIM = 128
SCALABLE = ("BATCH", "SEQ", "HEAD_DIM")


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.rand(BATCH, SEQ, HEAD_DIM), torch.rand(BATCH, SEQ, HEAD_DIM),
            torch.rand(BATCH, SEQ, HEAD_DIM)]


def get_init_inputs():
    return []
