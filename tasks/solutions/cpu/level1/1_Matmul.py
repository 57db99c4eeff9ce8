"""Reference CPU solution for level1/1_Matmul: i-k-j loops with a double-precision row
accumulator."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <algorithm>
#include <vector>

torch::Tensor matmul_cpu(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "matmul: inputs must be contiguous");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  std::vector<double> acc(N);
  for (int64_t i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < K; ++k) {
      const double av = A[i * K + k];
      const float* brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = (float)acc[j];
  }
  return c;
}
"""

_ext = load_inline(name="cpu_level1_1_matmul", cpp_sources=_CPP_SRC, functions=["matmul_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return _ext.matmul_cpu(A.contiguous(), B.contiguous())
