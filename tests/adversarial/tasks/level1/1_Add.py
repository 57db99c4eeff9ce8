# A deliberately small task for the containment tests: candidates that crash, hang or escape
# are evaluated against it, so the test spends its time on the sandbox, not on arithmetic.
import torch
import torch.nn as nn

N = 4096
SCALABLE = ("N",)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.rand(N), torch.rand(N)]


def get_init_inputs():
    return []
