"""CUDA exemplar: row-broadcast bias add on a 2-D grid (column blocks x rows); coalesced along columns."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor bias_add_forward(torch::Tensor x, torch::Tensor bias);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
__global__ void bias_add_kernel(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ out,
                                int64_t cols) {
    const int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t r = blockIdx.y;
    if (c < cols) out[r * cols + c] = x[r * cols + c] + bias[c];
}

torch::Tensor bias_add_forward(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat32, "bias: float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() == 2 && bias.dim() == 1 && bias.size(0) == x.size(1), "x (R, C) and bias (C) expected");
    auto xc = x.contiguous(), bc = bias.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    const int threads = 256;
    dim3 grid((unsigned)((cols + threads - 1) / threads), (unsigned)rows);  // rows <= 65535 for this exemplar
    auto stream = at::cuda::getCurrentCUDAStream();
    bias_add_kernel<<<grid, threads, 0, stream>>>(xc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(),
                                                  cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_broadcast", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["bias_add_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return _ext.bias_add_forward(x, bias)
