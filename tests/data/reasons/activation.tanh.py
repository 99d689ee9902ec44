# Builds its extension lazily, at the first forward: the build's processes (ninja, the compiler) would start
# inside the timed call; the harness refuses them and says to build at import.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        global _ext
        if _ext is None:
            _ext = load_inline(name="mkb_lazy_tanh", cpp_sources="torch::Tensor f(torch::Tensor x) { return x; }",
                               functions=["f"])
        return _ext.f(x)
