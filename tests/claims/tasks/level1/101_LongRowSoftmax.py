"""Softmax over rows of 65,536: every output is about 1.5e-5, far below an fp32 atol of 1e-4, so an
element-wise tolerance alone passes zeros (issue 18's tolerance class). The row length stays at any
--scale; only the row count scales."""
import torch
import torch.nn as nn

ROWS = 64
COLS = 65536
SCALABLE = {"ROWS": 4}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return []
