"""CUDA exemplar: row-wise prefix sum; one block per row scans 1024-wide chunks in shared memory with a carry."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor cumsum_forward(torch::Tensor x);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
constexpr int CHUNK = 1024;  // = blockDim.x

__global__ void cumsum_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    __shared__ float buf[CHUNK];
    const float* row = x + blockIdx.x * cols;
    float* orow = out + blockIdx.x * cols;
    float carry = 0.f;
    for (int64_t start = 0; start < cols; start += CHUNK) {
        const int64_t c = start + threadIdx.x;
        buf[threadIdx.x] = c < cols ? row[c] : 0.f;
        __syncthreads();
        for (int off = 1; off < CHUNK; off <<= 1) {  // Hillis-Steele inclusive scan
            const float add = threadIdx.x >= off ? buf[threadIdx.x - off] : 0.f;
            __syncthreads();
            buf[threadIdx.x] += add;
            __syncthreads();
        }
        if (c < cols) orow[c] = buf[threadIdx.x] + carry;
        carry += buf[CHUNK - 1];
        __syncthreads();
    }
}

torch::Tensor cumsum_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() == 2, "2-D input expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    cumsum_kernel<<<(unsigned)xc.size(0), CHUNK, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), xc.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_math", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["cumsum_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.cumsum_forward(x)
