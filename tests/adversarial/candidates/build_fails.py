# vinci-task: level1/1_Add
# vinci-expect: compile_error/build_failed
# vinci-devices: cpu
"""C++ that does not compile: the result carries the trimmed compiler error."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="vinci_broken", cpp_sources="torch::Tensor vadd(torch::Tensor a) { return a + ; }",
                  functions=["vadd"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.vadd(a)
