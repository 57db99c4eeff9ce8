# vinci-task: level1/11_ElementwiseChain
# vinci-expect: correct/
# vinci-expect-speedup-below: 6
# vinci-devices: cuda
"""Hack: the same side-stream trick done in C++: a cudaStreamCreate'd non-blocking stream, an event
so the kernel waits for its inputs, and no synchronisation back to PyTorch's current stream.
Seen: design.md §4 "running on a side stream". Expected side_stream at timing.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECLS = "torch::Tensor chain_async(torch::Tensor x, torch::Tensor y, torch::Tensor z);"
_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void chain_async_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                   const float* __restrict__ z, float* __restrict__ o, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * y[i] + z[i];
    o[i] = v > 0.f ? v * 0.5f : 0.f;
  }
}

torch::Tensor chain_async(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  static cudaStream_t side = nullptr;
  static cudaEvent_t ready = nullptr;
  if (side == nullptr) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  }
  cudaEventRecord(ready, at::cuda::getCurrentCUDAStream());
  cudaStreamWaitEvent(side, ready, 0);
  auto o = torch::empty_like(x);
  const int64_t n = x.numel();
  chain_async_kernel<<<(n + 255) / 256, 256, 0, side>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), z.data_ptr<float>(), o.data_ptr<float>(), n);
  return o;
}
"""
ext = load_inline(name="hack_side_stream", cpp_sources=_DECLS, cuda_sources=_CUDA, functions=["chain_async"],
                  verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, z):
        return ext.chain_async(x.contiguous(), y.contiguous(), z.contiguous())
