# task: activation.relu
# expect: incorrect
"""Deliberately wrong: handles only whole float4 groups and leaves the tail elements unwritten."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
__global__ void relu4(const float4* x, float4* y, long n4) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n4) { float4 v = x[i]; v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f);
                  v.w = fmaxf(v.w, 0.f); y[i] = v; }
}
torch::Tensor relu_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::zeros_like(xc);
    long n4 = xc.numel() / 4;
    if (n4) relu4<<<(n4 + 255) / 256, 256>>>((const float4*)xc.data_ptr<float>(), (float4*)y.data_ptr<float>(), n4);
    return y;
}
"""

_ext = load_inline(name="mkb_cuda_wrong_tail", cpp_sources="torch::Tensor relu_forward(torch::Tensor x);",
                   cuda_sources=cuda_src, functions=["relu_forward"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.relu_forward(x)
