"""Maxima of rows of 65,536: a row's maximum sits on its last column once in 65,536 random draws, so
a kernel whose loop stops one column short is exact on every random draw (the long-row teacher's
off-by-one strategy matched its Model on an H200, session 35). The row length stays at any --scale;
only the row count scales."""
import torch
import torch.nn as nn

ROWS = 64
COLS = 65536
SCALABLE = {"ROWS": 4}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amax(dim=-1)


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return []
