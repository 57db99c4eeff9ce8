# vinci-task: level1/1_Add
# vinci-expect: compile_error/build_failed
# vinci-devices: cpu
"""C++ that does not compile (a header that does not exist): the result carries the trimmed
compiler error. The missing header is fatal before torch's own headers are parsed, so this case
costs CI a second, not the minutes of a full extension build."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="vinci_broken",
                  cpp_sources='#include "vinci_no_such_header.h"\n#include <torch/extension.h>\n'
                              "torch::Tensor vadd(torch::Tensor a) { return a + ; }",
                  functions=["vadd"], no_implicit_headers=True, verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.vadd(a)
