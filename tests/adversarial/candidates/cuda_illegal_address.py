# vinci-task: level1/1_Add
# vinci-expect: runtime_error/cuda_error
# vinci-devices: cuda
"""Stores a terabyte past its output: an illegal address poisons the CUDA context, so the worker is restarted."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# One CUDA source shared verbatim by the GPU containment cases, so it builds once.
SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void vadd_kernel(const float* x, const float* y, float* z, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
__global__ void wild_store_kernel(float* z, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) z[i + (int64_t(1) << 40)] = 1.0f;
}
torch::Tensor vadd(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  auto out = torch::empty_like(a);
  const int64_t n = a.numel();
  vadd_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
torch::Tensor wild(torch::Tensor a, torch::Tensor b) {
  auto out = vadd(a, b);
  wild_store_kernel<<<(a.numel() + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>(), a.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""
ext = load_inline(name="vinci_containment_cuda", cpp_sources="torch::Tensor vadd(torch::Tensor a, torch::Tensor b);\n"
                  "torch::Tensor wild(torch::Tensor a, torch::Tensor b);", cuda_sources=SOURCE,
                  functions=["vadd", "wild"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return ext.wild(a, b)
