# vinci-task: level1/1_Add
# vinci-expect: compile_error/no_model_new
# vinci-devices: cpu,cuda
"""Valid Python that defines no ModelNew: a compile error, whatever else the file holds."""
import torch.nn as nn


class ModelRenamed(nn.Module):
    def forward(self, a, b):
        return a + b
