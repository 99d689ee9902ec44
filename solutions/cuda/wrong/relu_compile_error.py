# task: activation.relu
# expect: compile_error
"""Deliberately broken: the CUDA source has a type error, so the extension build must fail."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
__global__ void k(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = undefined_symbol; }
torch::Tensor relu_forward(torch::Tensor x) { k<<<1, 32>>>(x.data_ptr<float>(), 1); return x; }
"""

_ext = load_inline(name="mkb_cuda_wrong_compile", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                   cuda_sources=cuda_src, functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
