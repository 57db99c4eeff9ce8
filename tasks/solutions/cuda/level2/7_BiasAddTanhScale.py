"""Reference CUDA solution for level2/7_BiasAddTanhScale: one elementwise pass; float4 accesses
when each channel plane has a multiple of 4 elements (so a vector never spans two channels)."""
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

__device__ __forceinline__ float bts_op(float v, float b, float s) { return tanhf(v + b) * s; }

__global__ void bias_tanh_scale_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                       float* __restrict__ y, long long n, int C, int HW, float s, bool vec) {
  const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  if (vec) {  // HW % 4 == 0: a float4 lies inside one channel plane
    const long long n4 = n >> 2;
    const int hw4 = HW >> 2;
    for (long long i = tid; i < n4; i += stride) {
      const float b = bias[(int)((i / hw4) % C)];
      float4 v = reinterpret_cast<const float4*>(x)[i];
      v.x = bts_op(v.x, b, s);
      v.y = bts_op(v.y, b, s);
      v.z = bts_op(v.z, b, s);
      v.w = bts_op(v.w, b, s);
      reinterpret_cast<float4*>(y)[i] = v;
    }
  } else {
    for (long long i = tid; i < n; i += stride) y[i] = bts_op(x[i], bias[(int)((i / HW) % C)], s);
  }
}

torch::Tensor bias_tanh_scale_forward(torch::Tensor x, torch::Tensor bias, double scale) {
  CHECK_F32(x);
  CHECK_F32(bias);
  TORCH_CHECK(x.dim() == 4 && bias.numel() == x.size(1), "expected NCHW input and a per-channel bias");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = torch::empty_like(x);
  const long long n = x.numel();
  const int C = (int)x.size(1), HW = (int)(x.size(2) * x.size(3));
  if (n > 0) {
    const bool vec = (HW % 4 == 0) && aligned16(x.data_ptr<float>()) && aligned16(y.data_ptr<float>());
    bias_tanh_scale_kernel<<<grid_for(vec ? n / 4 : n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), n, C, HW, (float)scale, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return y;
}
"""

_CPP_SRC = "torch::Tensor bias_tanh_scale_forward(torch::Tensor x, torch::Tensor bias, double scale);"

_ext = load_inline(name="vinci_l2_bias_tanh_scale", cpp_sources=_CPP_SRC, cuda_sources=_CUDA_SRC,
                   functions=["bias_tanh_scale_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.rand(channels, 1, 1) - 0.5)
        self.scale = scale

    def forward(self, x):
        return _ext.bias_tanh_scale_forward(x.contiguous(), self.bias, self.scale)
