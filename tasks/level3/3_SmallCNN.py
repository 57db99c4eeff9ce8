"""Small CNN: (conv3x3 -> ReLU -> maxpool2) twice, flatten, linear classifier."""
import torch
import torch.nn as nn

BATCH = 128
C_IN = 3
H = 224
W = 224
C1 = 32
C2 = 64
NUM_CLASSES = 10
SCALABLE = {"BATCH": 1, "H": 4, "W": 4}


class Model(nn.Module):
    def __init__(self, in_channels, c1, c2, height, width, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(c2 * (height // 4) * (width // 4), num_classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def get_inputs():
    return [torch.rand(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C1, C2, H, W, NUM_CLASSES]
