# Builds its extension in /tmp (a folder of its own choosing): the harness's sandbox refuses that; the build
# folder the harness gives is the default of load_inline.
import os

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_build = "/tmp/mkb_my_ext_build"
os.makedirs(_build, exist_ok=True)
_ext = load_inline(name="mkb_tmp_sigmoid", cpp_sources="torch::Tensor f(torch::Tensor x) { return x; }",
                   functions=["f"], build_directory=_build)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.f(x)
