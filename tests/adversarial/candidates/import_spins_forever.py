# vinci-task: level1/1_Add
# vinci-expect: timeout/import_timeout
# vinci-devices: cpu
"""An endless loop at import, before its extension is ever built: the import timeout ends it, not
the compile timeout, and it is reported as what it is."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

while True:
    pass

ext = load_inline(name="spins", cpp_sources="torch::Tensor run(torch::Tensor a) { return a; }", functions=["run"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.run(a)
