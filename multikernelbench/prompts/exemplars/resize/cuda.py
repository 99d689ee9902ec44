"""CUDA exemplar: nearest 2x upsampling; one thread per output pixel, consecutive threads along the output row."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor upsample2x_forward(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
__global__ void upsample2x_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t total, int64_t h,
                                  int64_t w) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t ox = i % (2 * w), oy = (i / (2 * w)) % (2 * h), plane = i / (4 * h * w);
        out[i] = x[(plane * h + oy / 2) * w + ox / 2];
    }
}

torch::Tensor upsample2x_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() == 4, "(N, C, H, W) input expected");
    auto xc = x.contiguous();
    const int64_t h = xc.size(2), w = xc.size(3);
    auto out = torch::empty({xc.size(0), xc.size(1), 2 * h, 2 * w}, xc.options());
    const int64_t total = out.numel();
    if (total == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 65535);
    auto stream = at::cuda::getCurrentCUDAStream();
    upsample2x_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), total, h, w);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_resize", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["upsample2x_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.upsample2x_forward(x)
