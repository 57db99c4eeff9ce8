"""Linear layer (GEMM + bias) followed by ReLU."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 4096
OUT_FEATURES = 4096
SCALABLE = ("BATCH", "IN_FEATURES", "OUT_FEATURES")


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
