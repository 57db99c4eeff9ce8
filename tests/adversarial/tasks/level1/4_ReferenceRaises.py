# Malformed on purpose: a reference whose forward raises must give invalid_task, not blame the candidate.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a):
        raise ValueError("this reference is broken")


def get_inputs():
    return [torch.rand(16)]


def get_init_inputs():
    return []
