"""Linear layer, LayerNorm over the features (affine), then exact GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
IN_FEATURES = 2048
OUT_FEATURES = 4096
SCALABLE = ("BATCH", "IN_FEATURES", "OUT_FEATURES")


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features, eps=1e-5)

    def forward(self, x):
        return F.gelu(self.norm(self.linear(x)))


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
