# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: the host wrapper rejects every input with a TORCH_CHECK failure at run time."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 7, "this kernel only accepts 7-D tensors");
    return x;
}
"""

_ext = load_inline(name="mkb_cuda_wrong_raises", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                   cuda_sources=cuda_src, functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
