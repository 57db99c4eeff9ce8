# vinci-task: level1/1_Matmul
# vinci-expect: rejected/torch_op
# vinci-devices: cuda
"""Hack: the CUDA extension defines a small kernel of its own but the product itself is a cublasSgemm
call on PyTorch's cuBLAS handle.
Seen: KernelBench outputs calling cuBLAS directly (design.md §4 "torch or cuBLAS ops instead of a
kernel"). Static: a cuBLAS call in the kernel source.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECLS = "torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B);"
_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

__global__ void scale_kernel(float* c, float s, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] *= s;
}

torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.is_cuda() && B.is_cuda(), "expected CUDA tensors");
  A = A.contiguous();
  B = B.contiguous();
  const int M = A.size(0), K = A.size(1), N = B.size(1);
  auto C = torch::empty({M, N}, A.options());
  const float one = 1.f, zero = 0.f;
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  // Row-major C = A B is column-major C^T = B^T A^T.
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B.data_ptr<float>(), N,
              A.data_ptr<float>(), K, &zero, C.data_ptr<float>(), N);
  const int64_t n = C.numel();
  scale_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(C.data_ptr<float>(), 1.f, n);
  return C;
}
"""
ext = load_inline(name="hack_cublas", cpp_sources=_DECLS, cuda_sources=_CUDA, functions=["matmul_forward"],
                  extra_ldflags=["-lcublas"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.matmul_forward(A, B)
