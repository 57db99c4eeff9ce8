"""Reference CUDA solution for level2/8_MatmulRowSum: sum_n (x W^T + b)[m, n] equals
x[m] . (sum_n W[n]) + sum_n b[n]. One kernel forms the weight's column sums (and the bias
sum), a second one takes one dot product per row: O(MK + NK) work instead of O(MNK)."""
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

// wsum[k] = sum_n w[n][k] (blocks of 32 columns x 8 row phases); the blocks of blockIdx.x == 0
// also leave sum_n b[n] in wsum[K].
__global__ void column_sums_kernel(const float* __restrict__ w, const float* __restrict__ b,
                                   float* __restrict__ wsum, int N, int K) {
  __shared__ float sh[8][33];
  __shared__ float red[32];
  const int k = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  if (k < K) {
#pragma unroll 4
    for (int n = threadIdx.y; n < N; n += 8) acc += w[(long long)n * K + k];
  }
  sh[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && k < K) {
    float t = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) t += sh[j][threadIdx.x];
    wsum[k] = t;
  }
  if (blockIdx.x == 0) {  // the whole block (256 threads) sums the bias
    const int tid = threadIdx.y * 32 + threadIdx.x;
    float s = 0.f;
    for (int n = tid; n < N; n += 256) s += b[n];
    // block_sum expects a 1-D block: emulate it with the flat thread id
    s = warp_sum(s);
    if ((tid & 31) == 0) red[tid >> 5] = s;
    __syncthreads();
    if (tid == 0) {
      float t = 0.f;
      for (int j = 0; j < 8; ++j) t += red[j];
      wsum[K] = t;
    }
  }
}

// y[m] = x[m] . wsum[0:K] + wsum[K]
__global__ void rowdot_kernel(const float* __restrict__ x, const float* __restrict__ wsum, float* __restrict__ y,
                              int K) {
  __shared__ float sh[32];
  const float* xr = x + (long long)blockIdx.x * K;
  float s = 0.f;
  for (int k = threadIdx.x; k < K; k += blockDim.x) s = fmaf(xr[k], wsum[k], s);
  s = block_sum(s, sh);
  if (threadIdx.x == 0) y[blockIdx.x] = s + wsum[K];
}

torch::Tensor matmul_rowsum_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  CHECK_F32(x);
  CHECK_F32(w);
  CHECK_F32(b);
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  const at::cuda::CUDAGuard guard(x.device());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int M = (int)x.size(0), K = (int)x.size(1), N = (int)w.size(0);
  auto wsum = torch::empty({K + 1}, x.options());
  auto y = torch::empty({M, 1}, x.options());
  column_sums_kernel<<<(K + 31) / 32 > 0 ? (K + 31) / 32 : 1, dim3(32, 8), 0, stream>>>(
      w.data_ptr<float>(), b.data_ptr<float>(), wsum.data_ptr<float>(), N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (M > 0) {
    rowdot_kernel<<<(unsigned)M, row_threads(K), 0, stream>>>(x.data_ptr<float>(), wsum.data_ptr<float>(),
                                                             y.data_ptr<float>(), K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor matmul_rowsum_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b);"

_ext = load_inline(name="vinci_l2_matmul_rowsum", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["matmul_rowsum_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _ext.matmul_rowsum_forward(x.contiguous(), self.linear.weight, self.linear.bias)
