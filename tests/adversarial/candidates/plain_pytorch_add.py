# vinci-task: level1/1_Add
# vinci-expect: rejected/no_custom_kernel
# vinci-devices: cpu,cuda
"""Plain PyTorch, no kernel of its own: refused under --torch-ops forbid (the default), evaluated like
any candidate under --torch-ops allow, where a user times the reference or a torch.compile variant
(Pipeline.PlainPytorchIsEvaluatedUnderAllow)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return torch.add(a, b)
