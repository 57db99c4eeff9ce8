"""Reference CUDA solution for level1/11_ElementwiseChain: the four ops fused into one
vectorised pass, rounding each step as the eager ops do (no fused multiply-add)."""
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
// ---- elementwise helpers ----
static inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
static inline int grid_for(long long work, int threads) {
  long long g = (work + threads - 1) / threads;
  if (g < 1) g = 1;
  if (g > 1048576) g = 1048576;  // grid-stride loops cover the rest
  return (int)g;
}
// y[i] = f(x[i]); vec: x and y are 16-byte aligned, so float4 accesses may be used.
template <class F>
__global__ void map_unary_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, bool vec, F f) {
  const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long done = 0;
  if (vec) {
    const long long n4 = n >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (long long i = tid; i < n4; i += stride) {
      float4 v = x4[i];
      v.x = f(v.x);
      v.y = f(v.y);
      v.z = f(v.z);
      v.w = f(v.w);
      y4[i] = v;
    }
    done = n4 << 2;
  }
  for (long long i = done + tid; i < n; i += stride) y[i] = f(x[i]);
}
template <class F>
static void map_unary(const float* x, float* y, long long n, F f, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = aligned16(x) && aligned16(y);
  map_unary_kernel<<<grid_for(vec ? (n + 3) / 4 : n, 256), 256, 0, stream>>>(x, y, n, vec, f);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

__device__ __forceinline__ float chain_op(float x, float y, float z) {
  const float t = __fadd_rn(__fmul_rn(x, y), z);
  return (t > 0.f ? t : 0.f) * 0.5f;
}

__global__ void chain_kernel(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                             float* __restrict__ out, long long n, bool vec) {
  const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long done = 0;
  if (vec) {
    const long long n4 = n >> 2;
    for (long long i = tid; i < n4; i += stride) {
      const float4 a = reinterpret_cast<const float4*>(x)[i];
      const float4 b = reinterpret_cast<const float4*>(y)[i];
      const float4 c = reinterpret_cast<const float4*>(z)[i];
      float4 o;
      o.x = chain_op(a.x, b.x, c.x);
      o.y = chain_op(a.y, b.y, c.y);
      o.z = chain_op(a.z, b.z, c.z);
      o.w = chain_op(a.w, b.w, c.w);
      reinterpret_cast<float4*>(out)[i] = o;
    }
    done = n4 << 2;
  }
  for (long long i = done + tid; i < n; i += stride) out[i] = chain_op(x[i], y[i], z[i]);
}

torch::Tensor chain_forward(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  CHECK_F32(x);
  CHECK_F32(y);
  CHECK_F32(z);
  TORCH_CHECK(x.sizes() == y.sizes() && x.sizes() == z.sizes(), "chain: shapes differ");
  const at::cuda::CUDAGuard guard(x.device());
  auto out = torch::empty_like(x);
  const long long n = x.numel();
  if (n > 0) {
    const bool vec = aligned16(x.data_ptr<float>()) && aligned16(y.data_ptr<float>()) &&
                     aligned16(z.data_ptr<float>()) && aligned16(out.data_ptr<float>());
    chain_kernel<<<grid_for(vec ? (n + 3) / 4 : n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), z.data_ptr<float>(), out.data_ptr<float>(), n, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return out;
}
"""

_CPP_SRC = "torch::Tensor chain_forward(torch::Tensor x, torch::Tensor y, torch::Tensor z);"

_ext = load_inline(name="vinci_l1_elementwise_chain", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["chain_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, z):
        return _ext.chain_forward(x.contiguous(), y.contiguous(), z.contiguous())
