# vinci-task: level1/1_Add
# vinci-expect: rejected/threads_processes
# vinci-devices: cpu
"""Calls os._exit(0) in forward: the source rules reject it before it runs."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# One C++ source shared verbatim by every containment case, so the extension cache builds it once.
SOURCE = r"""
#include <torch/extension.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

torch::Tensor vadd(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  auto out = torch::empty_like(a);
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* z = out.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
  return out;
}
torch::Tensor crash(torch::Tensor a, torch::Tensor b) { volatile int* p = nullptr; *p = 1; return vadd(a, b); }
torch::Tensor hang(torch::Tensor a, torch::Tensor b) { volatile bool go = true; while (go) {} return vadd(a, b); }
torch::Tensor quit(torch::Tensor a, torch::Tensor b) { _exit(0); }
torch::Tensor spawn(torch::Tensor a, torch::Tensor b) {
  if (syscall(SYS_fork) == 0) for (;;) pause();
  return vadd(a, b);
}
torch::Tensor fill(torch::Tensor a, torch::Tensor b) {
  const char name[] = {'f', 'i', 'l', 'l', '.', 'b', 'i', 'n', 0};
  static char block[1 << 20];
  const int fd = ::open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  while (fd >= 0 && ::write(fd, block, sizeof block) > 0) {}
  if (fd >= 0) ::close(fd);
  return vadd(a, b);
}
"""
ext = load_inline(name="vinci_containment", cpp_sources=SOURCE,
                  functions=["vadd", "crash", "hang", "quit", "spawn", "fill"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        import os
        os._exit(0)
