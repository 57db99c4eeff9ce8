"""Reference CUDA solution for level1/6_RMSNorm: one block per row, sum of squares by block
reduction, then x * rsqrt(mean + eps) * weight."""
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
// ---- warp / block reductions (blockDim.x must be a multiple of 32, at most 1024) ----
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Every thread of the block receives the result. sh: at least 32 floats of shared memory.
__device__ __forceinline__ float block_sum(float v, float* sh) {
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // sh may still be read by a previous call
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  v = (lane < nw) ? sh[lane] : 0.f;
  return warp_sum(v);
}
__device__ __forceinline__ float block_max(float v, float* sh) {
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  v = (lane < nw) ? sh[lane] : -INFINITY;
  return warp_max(v);
}
// Threads per block for a one-block-per-row kernel over rows of length D.
static inline int row_threads(long long D) {
  int t = 32;
  while (t < 512 && (long long)t * 4 < D) t <<= 1;
  return t;
}

__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                               int D, float eps) {
  __shared__ float sh[32];
  const float* xr = x + (long long)blockIdx.x * D;
  float* yr = y + (long long)blockIdx.x * D;
  float s = 0.f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) s = fmaf(xr[i], xr[i], s);
  const float inv = rsqrtf(block_sum(s, sh) / (float)D + eps);
  for (int i = threadIdx.x; i < D; i += blockDim.x) yr[i] = xr[i] * inv * w[i];
}

torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor w, double eps) {
  CHECK_F32(x);
  CHECK_F32(w);
  const at::cuda::CUDAGuard guard(x.device());
  const int D = (int)x.size(-1);
  TORCH_CHECK(w.numel() == D, "rmsnorm: bad weight shape");
  const long long R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  if (R > 0) {
    rmsnorm_kernel<<<(unsigned)R, row_threads(D), 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), D, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor w, double eps);"

_ext = load_inline(name="vinci_l1_rmsnorm", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["rmsnorm_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        return _ext.rmsnorm_forward(x.contiguous(), self.weight, self.eps)
