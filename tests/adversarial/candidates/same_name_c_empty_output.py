# vinci-task: level1/1_Add
# vinci-expect: incorrect/
# vinci-devices: cpu
"""The third "fused_kernel" (after KernelBench's result_reuse_kernel): it returns an uninitialised
tensor of the output's shape, hoping for memory that still holds a right answer. In a process of its
own there is none; under the old in-process evaluator it was handed the second candidate's module."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
  return torch::empty_like(a);
}
"""
ext = load_inline(name="fused_kernel", cpp_sources=SOURCE, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.run(a, b)
