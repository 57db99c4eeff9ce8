"""Reference CPU solution for level2/8_MatmulRowSum: sum_n (x W^T + b)[m, n] equals
x[m] . (sum_n W[n]) + sum_n b[n], so the weight's column sums are formed once (in double)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
#include <torch/extension.h>

#include <vector>

torch::Tensor matmul_rowsum_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, 1}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  std::vector<double> wsum(K, 0.0);
  double bsum = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) wsum[k] += Wt[n * K + k];
    bsum += Bs[n];
  }
  for (int64_t m = 0; m < M; ++m) {
    double acc = bsum;
    for (int64_t k = 0; k < K; ++k) acc += X[m * K + k] * wsum[k];
    Y[m] = (float)acc;
  }
  return y;
}
"""

_ext = load_inline(name="cpu_level2_8_matmulrowsum", cpp_sources=_CPP_SRC, functions=["matmul_rowsum_cpu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _ext.matmul_rowsum_cpu(x.contiguous(), self.linear.weight, self.linear.bias)
