# Malformed on purpose: a syntax error in a problem file must give invalid_task naming the line.
import torch
import torch.nn as nn


class Model(nn.Module)
    def forward(self, a):
        return a * 2
