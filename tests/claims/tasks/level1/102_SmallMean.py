"""Row means of small signed values: each mean is about 1e-5, far below an fp32 atol of 1e-4, so an
element-wise tolerance alone passes zeros (issue 18's tolerance class)."""
import torch
import torch.nn as nn

ROWS = 4096
COLS = 4096
SCALABLE = {"ROWS": 16}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 1e-3]


def get_init_inputs():
    return []
