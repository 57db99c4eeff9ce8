"""Reference CUDA solution for level1/9_Cumsum: one block per row; the row is scanned in chunks
of 4 elements per thread (thread-local scan, warp-shuffle scan, scan of warp totals), with the
running carry between chunks kept in double precision."""
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

#define SCAN_THREADS 1024

__global__ void __launch_bounds__(SCAN_THREADS) cumsum_rows_kernel(const float* __restrict__ x,
                                                                    float* __restrict__ y, int L, bool vec) {
  __shared__ float warp_tot[32];
  const float* xr = x + (long long)blockIdx.x * L;
  float* yr = y + (long long)blockIdx.x * L;
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
  double carry = 0.0;
  for (int base = 0; base < L; base += 4 * blockDim.x) {
    const int i0 = base + 4 * threadIdx.x;
    float v[4];
    if (vec && i0 + 4 <= L) {
      const float4 t = *reinterpret_cast<const float4*>(xr + i0);
      v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = (i0 + j < L) ? xr[i0 + j] : 0.f;
    }
    v[1] += v[0];
    v[2] += v[1];
    v[3] += v[2];
    float inc = v[3];  // inclusive scan of the thread totals within the warp
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float t = __shfl_up_sync(0xffffffffu, inc, o);
      if (lane >= o) inc += t;
    }
    if (lane == 31) warp_tot[wid] = inc;
    __syncthreads();
    if (wid == 0) {
      float w = lane < nw ? warp_tot[lane] : 0.f;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const float t = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += t;
      }
      if (lane < nw) warp_tot[lane] = w;
    }
    __syncthreads();
    float excl = __shfl_up_sync(0xffffffffu, inc, 1);  // exclusive prefix within the warp
    if (lane == 0) excl = 0.f;
    if (wid > 0) excl += warp_tot[wid - 1];
    const float chunk_total = warp_tot[nw - 1];
    if (vec && i0 + 4 <= L) {
      float4 o;
      o.x = (float)(carry + (double)(excl + v[0]));
      o.y = (float)(carry + (double)(excl + v[1]));
      o.z = (float)(carry + (double)(excl + v[2]));
      o.w = (float)(carry + (double)(excl + v[3]));
      *reinterpret_cast<float4*>(yr + i0) = o;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (i0 + j < L) yr[i0 + j] = (float)(carry + (double)(excl + v[j]));
    }
    carry += (double)chunk_total;
    __syncthreads();  // warp_tot is rewritten by the next chunk
  }
}

torch::Tensor cumsum_forward(torch::Tensor x) {
  CHECK_F32(x);
  TORCH_CHECK(x.dim() == 2, "cumsum: expected a 2-D tensor");
  const at::cuda::CUDAGuard guard(x.device());
  const long long R = x.size(0);
  const int L = (int)x.size(1);
  auto y = torch::empty_like(x);
  if (R > 0 && L > 0) {
    const bool vec = (L % 4 == 0) && ((reinterpret_cast<uintptr_t>(x.data_ptr<float>()) & 15) == 0) &&
                     ((reinterpret_cast<uintptr_t>(y.data_ptr<float>()) & 15) == 0);
    int threads = 32;
    while (threads < SCAN_THREADS && threads * 4 < L) threads <<= 1;
    cumsum_rows_kernel<<<(unsigned)R, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), L, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor cumsum_forward(torch::Tensor x);"

_ext = load_inline(name="vinci_l1_cumsum", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["cumsum_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.cumsum_forward(x.contiguous())
