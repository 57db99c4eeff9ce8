"""Three-layer perceptron: Linear -> ReLU -> Linear -> ReLU -> Linear."""
import torch
import torch.nn as nn

BATCH = 4096
IN_FEATURES = 2048
HIDDEN = 4096
OUT_FEATURES = 1024
SCALABLE = ("BATCH", "IN_FEATURES", "HIDDEN", "OUT_FEATURES")


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out_features)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, HIDDEN, OUT_FEATURES]
