# vinci-task: level1/1_Add
# vinci-expect: compile_error/syntax_error
# vinci-devices: cpu,cuda
"""A candidate that is not valid Python: classified before anything runs."""
import torch.nn as nn


class ModelNew(nn.Module)
    def forward(self, a, b):
        return a + b
