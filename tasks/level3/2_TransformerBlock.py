"""Pre-norm transformer block (no mask, no dropout):
    h = x + Wo * MHA(LN1(x)),   out = h + W2 * GELU(W1 * LN2(h)).
Attention is written out with explicit Q/K/V projections and a softmax."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
HEADS = 16
HEAD_DIM = 64  # d_model = HEADS * HEAD_DIM
MLP_RATIO = 4
SCALABLE = ("BATCH", "SEQ", "HEAD_DIM")


class Model(nn.Module):
    def __init__(self, d_model, num_heads, mlp_ratio):
        super().__init__()
        self.num_heads = num_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        hd = d // self.num_heads
        y = self.ln1(x)
        q = self.q_proj(y).view(b, s, self.num_heads, hd).transpose(1, 2)
        k = self.k_proj(y).view(b, s, self.num_heads, hd).transpose(1, 2)
        v = self.v_proj(y).view(b, s, self.num_heads, hd).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd), dim=-1)
        o = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        h = x + self.o_proj(o)
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


def get_inputs():
    return [torch.rand(BATCH, SEQ, HEADS * HEAD_DIM)]


def get_init_inputs():
    return [HEADS * HEAD_DIM, HEADS, MLP_RATIO]
