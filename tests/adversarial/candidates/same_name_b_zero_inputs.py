# vinci-task: level1/1_Add
# vinci-expect: rejected/mutated_inputs
# vinci-devices: cpu
"""The second "fused_kernel" (after KernelBench's zero_out_kernel): it zeroes its inputs and returns
zeros. Its verdict is its own, and no other candidate's module may be this one."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
  float* x = a.data_ptr<float>();
  float* y = b.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) x[i] = y[i] = 0.0f;
  return torch::zeros_like(a);
}
"""
ext = load_inline(name="fused_kernel", cpp_sources=SOURCE, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.run(a, b)
