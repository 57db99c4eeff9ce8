"""Reference CUDA solution for level1/5_LayerNorm: one block per row, Welford mean / variance (one pass),
then (x - mean) * rstd * weight + bias."""
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
// ---- per-row statistics for LayerNorm: Welford per thread, merged across the block ----
__device__ __forceinline__ void welford_merge(float& n, float& mean, float& m2, float nb, float meanb, float m2b) {
  if (nb == 0.f) return;
  const float nn = n + nb;
  const float delta = meanb - mean;
  const float fb = nb / nn;
  mean += delta * fb;
  m2 += m2b + delta * delta * n * fb;
  n = nn;
}
__device__ __forceinline__ void welford_warp(float& n, float& mean, float& m2) {  // result in lane 0
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float nb = __shfl_down_sync(0xffffffffu, n, o);
    const float mb = __shfl_down_sync(0xffffffffu, mean, o);
    const float qb = __shfl_down_sync(0xffffffffu, m2, o);
    welford_merge(n, mean, m2, nb, mb, qb);
  }
}
// mean and 1/sqrt(var + eps) of xr[0:D] (biased variance), identical in every thread of the block
__device__ __forceinline__ void row_mean_rstd(const float* __restrict__ xr, int D, float eps, float& mean,
                                              float& rstd) {
  __shared__ float part[3][32];
  __shared__ float result[2];
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  float n = 0.f, mu = 0.f, m2 = 0.f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    const float v = xr[i];
    n += 1.f;
    const float d = v - mu;
    mu += d / n;
    m2 = fmaf(d, v - mu, m2);
  }
  welford_warp(n, mu, m2);
  if (lane == 0) {
    part[0][wid] = n;
    part[1][wid] = mu;
    part[2][wid] = m2;
  }
  __syncthreads();
  if (wid == 0) {
    n = lane < nw ? part[0][lane] : 0.f;
    mu = lane < nw ? part[1][lane] : 0.f;
    m2 = lane < nw ? part[2][lane] : 0.f;
    welford_warp(n, mu, m2);
    if (lane == 0) {
      result[0] = mu;
      result[1] = rsqrtf(m2 / n + eps);
    }
  }
  __syncthreads();
  mean = result[0];
  rstd = result[1];
}

__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y, int D, float eps) {
  const float* xr = x + (long long)blockIdx.x * D;
  float* yr = y + (long long)blockIdx.x * D;
  float mean, rstd;
  row_mean_rstd(xr, D, eps, mean, rstd);
  for (int i = threadIdx.x; i < D; i += blockDim.x) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  CHECK_F32(x);
  CHECK_F32(w);
  CHECK_F32(b);
  const at::cuda::CUDAGuard guard(x.device());
  const int D = (int)x.size(-1);
  TORCH_CHECK(w.numel() == D && b.numel() == D, "layernorm: bad parameter shapes");
  const long long R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  if (R > 0) {
    layernorm_kernel<<<(unsigned)R, row_threads(D), 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), D, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

_ext = load_inline(name="vinci_l1_layernorm", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["layernorm_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=1e-5, elementwise_affine=True)

    def forward(self, x):
        return _ext.layernorm_forward(x.contiguous(), self.ln.weight, self.ln.bias, self.ln.eps)
