"""CUDA candidate for broadcast.add_row_bias: x[B, N] + bias[N] in one coalesced pass (fp32).

Each thread handles 4 consecutive columns of one row with a 16-byte load when the row start is aligned;
the bias (N floats) is reused by every row and stays in L2."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void add_bias_vec4(const float4* __restrict__ x, const float4* __restrict__ b, float4* __restrict__ y,
                              long rows, long n4) {
    long total = rows * n4;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        float4 v = x[i], w = __ldg(&b[i % n4]);
        v.x += w.x; v.y += w.y; v.z += w.z; v.w += w.w;
        y[i] = v;
    }
}

__global__ void add_bias_scalar(const float* __restrict__ x, const float* __restrict__ b, float* __restrict__ y,
                                long rows, long n) {
    long total = rows * n;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x)
        y[i] = x[i] + __ldg(&b[i % n]);
}

torch::Tensor add_bias(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto bc = bias.contiguous();
    auto y = torch::empty_like(xc);
    long n = bc.numel();
    long rows = xc.numel() / n;
    int threads = 256;
    long blocks_cap = 132L * 32;
    if (n % 4 == 0 && reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0 &&
        reinterpret_cast<uintptr_t>(bc.data_ptr<float>()) % 16 == 0) {
        long total = rows * (n / 4);
        long blocks = std::min<long>((total + threads - 1) / threads, blocks_cap);
        add_bias_vec4<<<blocks, threads>>>(reinterpret_cast<const float4*>(xc.data_ptr<float>()),
                                           reinterpret_cast<const float4*>(bc.data_ptr<float>()),
                                           reinterpret_cast<float4*>(y.data_ptr<float>()), rows, n / 4);
    } else {
        long total = rows * n;
        long blocks = std::min<long>((total + threads - 1) / threads, blocks_cap);
        add_bias_scalar<<<blocks, threads>>>(xc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), rows, n);
    }
    return y;
}
"""

cpp_src = "torch::Tensor add_bias(torch::Tensor x, torch::Tensor bias);"

_ext = load_inline(name="mkb_cuda_broadcast_add_row_bias", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["add_bias"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.add_bias(x, self.bias)
