# vinci-task: level1/1_Matmul
# vinci-expect: rejected/threads_processes
# vinci-devices: cpu,cuda
"""Hack: the C++ extension fans the rows out over std::thread workers (all hardware threads), work
the timing and CPU-budget accounting of a single-stream kernel does not expect.
Seen: design.md §4 "threads or subprocesses". Static: std::thread in the kernel source.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <algorithm>
#include <thread>
#include <vector>

static void rows(const float* a, const float* b, float* c, int64_t K, int64_t N, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i) {
    for (int64_t j = 0; j < N; ++j) c[i * N + j] = 0.f;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = a[i * K + k];
      for (int64_t j = 0; j < N; ++j) c[i * N + j] += aik * b[k * N + j];
    }
  }
}

torch::Tensor matmul_threads(torch::Tensor A, torch::Tensor B) {
  A = A.contiguous();
  B = B.contiguous();
  const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
  auto C = torch::empty({M, N}, A.options());
  const int64_t workers = std::max<int64_t>(2, std::thread::hardware_concurrency());
  const int64_t per = (M + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (int64_t r0 = 0; r0 < M; r0 += per) {
    pool.emplace_back(rows, A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), K, N, r0,
                      std::min(M, r0 + per));
  }
  for (auto& t : pool) t.join();
  return C;
}
"""
ext = load_inline(name="hack_std_thread", cpp_sources=_CPP, functions=["matmul_threads"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.matmul_threads(A, B)
