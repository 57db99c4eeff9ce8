# Malformed on purpose: a problem file without get_inputs() must give invalid_task, not a crash.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        return a * 2


def get_init_inputs():
    return []
