# vinci-task: level1/1_Matmul
# vinci-expect: rejected/no_custom_kernel
# vinci-devices: cpu,cuda
"""Hack: "optimises" the matmul as a Python loop over row blocks of torch.mm, with no compiled kernel.
Seen: KernelBench's most common failure to write a kernel at all; design.md §4. Static: no
load_inline extension and no Triton kernel.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        blocks = [torch.mm(A[i:i + 128], B) for i in range(0, A.shape[0], 128)]
        return torch.cat(blocks, dim=0)
