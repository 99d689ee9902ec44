"""CUDA exemplar: direct 1-D convolution; one thread per output element, weights read through the cache."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor conv1d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                              float* __restrict__ out, int64_t total, int64_t cin, int64_t cout, int64_t length,
                              int64_t out_len, int64_t ksize) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i % out_len, co = (i / out_len) % cout, b = i / (out_len * cout);
        float acc = bias[co];
        for (int64_t ci = 0; ci < cin; ++ci) {
            const float* xr = x + (b * cin + ci) * length + t;
            const float* wr = w + (co * cin + ci) * ksize;
            for (int64_t k = 0; k < ksize; ++k) acc += __ldg(wr + k) * xr[k];
        }
        out[i] = acc;
    }
}

torch::Tensor conv1d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(weight.is_cuda() && weight.scalar_type() == torch::kFloat32, "weight: float32 CUDA tensor expected");
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat32, "bias: float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() == 3 && weight.dim() == 3 && x.size(1) == weight.size(1), "shape mismatch");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    const int64_t batch = xc.size(0), cin = xc.size(1), length = xc.size(2);
    const int64_t cout = wc.size(0), ksize = wc.size(2), out_len = length - ksize + 1;
    auto out = torch::empty({batch, cout, out_len}, xc.options());
    const int64_t total = out.numel();
    if (total == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 65535);
    auto stream = at::cuda::getCurrentCUDAStream();
    conv1d_kernel<<<blocks, threads, 0, stream>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(),
                                                  out.data_ptr<float>(), total, cin, cout, length, out_len, ksize);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_convolution", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["conv1d_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # Created exactly as in the reference so the seeded initialisation gives the same weights;
        # its forward is never called.
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.conv1d_forward(x, self.conv.weight, self.conv.bias)
