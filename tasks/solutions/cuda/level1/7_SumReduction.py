"""Reference CUDA solution for level1/7_SumReduction: blocks of 32 columns x 8 row phases;
each thread sums a strided slice of dimension 1 (coalesced over the last dimension), then
the 8 partial sums are combined in shared memory."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

#define CHECK_F32(x)                                                                  \
  TORCH_CHECK((x).is_cuda() && (x).is_contiguous() && (x).scalar_type() == torch::kFloat32, \
              #x " must be a contiguous float32 CUDA tensor")

// x: (B, R, C) -> y: (B, C), y[b][c] = sum_r x[b][r][c]
__global__ void sum_dim1_kernel(const float* __restrict__ x, float* __restrict__ y, int B, int R, int C) {
  __shared__ float sh[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int b = blockIdx.y; b < B; b += gridDim.y) {
    float acc = 0.f;
    if (c < C) {
      const float* p = x + (long long)b * R * C + c;
#pragma unroll 4
      for (int r = threadIdx.y; r < R; r += 8) acc += p[(long long)r * C];
    }
    sh[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
      float t = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) t += sh[j][threadIdx.x];
      y[(long long)b * C + c] = t;
    }
    __syncthreads();
  }
}

torch::Tensor sum_dim1_forward(torch::Tensor x) {
  CHECK_F32(x);
  TORCH_CHECK(x.dim() == 3, "sum_dim1: expected a 3-D tensor");
  const at::cuda::CUDAGuard guard(x.device());
  const int B = (int)x.size(0), R = (int)x.size(1), C = (int)x.size(2);
  auto y = torch::empty({B, C}, x.options());
  if (B > 0 && C > 0) {
    dim3 grid((C + 31) / 32, B < 65535 ? B : 65535);
    sum_dim1_kernel<<<grid, dim3(32, 8), 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(),
                                                                              y.data_ptr<float>(), B, R, C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor sum_dim1_forward(torch::Tensor x);"

_ext = load_inline(name="vinci_l1_sum_dim1", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["sum_dim1_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.sum_dim1_forward(x.contiguous())
