"""CUDA exemplar: leaky ReLU; a grid-stride loop, slope passed as a kernel argument."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor leaky_relu_forward(torch::Tensor x, double negative_slope);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
__global__ void leaky_relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n, float slope) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        out[i] = v > 0.f ? v : v * slope;
    }
}

torch::Tensor leaky_relu_forward(torch::Tensor x, double negative_slope) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    auto stream = at::cuda::getCurrentCUDAStream();
    leaky_relu_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n,
                                                      (float)negative_slope);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_activation", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["leaky_relu_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.leaky_relu_forward(x, float(self.negative_slope))
