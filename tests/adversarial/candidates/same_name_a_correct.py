# vinci-task: level1/1_Add
# vinci-expect: correct/|rejected/library_compute
# vinci-devices: cpu
"""One of three candidates whose extensions share the name "fused_kernel" with different sources, as
model samples do all the time: each must be judged on its own module. This one adds correctly.
Its add is tiny beside a call's glue, so on a loaded 2-core host the trusted sampler may find too
few samples in its compiled code to measure a share (a CI run: 5), which forbid refuses:
`library_compute` is as right as `correct` here; another module's add would be `incorrect`."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
  a = a.contiguous();
  b = b.contiguous();
  auto out = torch::empty_like(a);
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* z = out.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
  return out;
}
"""
ext = load_inline(name="fused_kernel", cpp_sources=SOURCE, functions=["run"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.run(a, b)
