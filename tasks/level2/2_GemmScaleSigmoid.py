"""Linear layer, multiplication by a constant, then sigmoid."""
import torch
import torch.nn as nn

BATCH = 8192
IN_FEATURES = 2048
OUT_FEATURES = 4096
SCALE = 1.5
SCALABLE = ("BATCH", "IN_FEATURES", "OUT_FEATURES")


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.sigmoid(self.linear(x) * self.scale)


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, SCALE]
