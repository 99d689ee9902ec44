# task: activation.relu
# expect: runtime_error
# reason: illegal memory access
# gpu-only
"""Fault: the kernel writes through a null device pointer (illegal memory access)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
__global__ void bad_relu(const float* x, float* out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { float* volatile p = nullptr; p[i] = x[i] > 0.f ? x[i] : 0.f; }
}
torch::Tensor relu_forward(torch::Tensor x) {
    auto out = torch::empty_like(x);
    long n = x.numel();
    bad_relu<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

_ext = load_inline(name="mkb_cuda_wrong_illegal_address", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_forward(x)
