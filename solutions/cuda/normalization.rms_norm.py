"""CUDA candidate for normalization.rms_norm: one block per row, warp-shuffle reduction (fp32).

The row is read once to accumulate the sum of squares and a second time (mostly from L1/L2, a 16 KB row
fits) to scale by rstd * weight; output written once."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <int THREADS>
__global__ void rms_norm_rows(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                              int H, float eps) {
    const float* xr = x + (long)blockIdx.x * H;
    float* yr = y + (long)blockIdx.x * H;
    float ss = 0.f;
    for (int j = threadIdx.x; j < H; j += THREADS) { float v = xr[j]; ss += v * v; }
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffff, ss, o);
    __shared__ float warp_sums[THREADS / 32];
    __shared__ float rstd_s;
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.f;
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (threadIdx.x == 0) rstd_s = rsqrtf(v / H + eps);
    }
    __syncthreads();
    float r = rstd_s;
    for (int j = threadIdx.x; j < H; j += THREADS) yr[j] = xr[j] * r * __ldg(&w[j]);
}

torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto y = torch::empty_like(xc);
    int H = xc.size(-1);
    long rows = xc.numel() / H;
    rms_norm_rows<256><<<rows, 256>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(), H, (float)eps);
    return y;
}
"""

cpp_src = "torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps);"

_ext = load_inline(name="mkb_cuda_normalization_rms_norm", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["rms_norm"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rms_norm(x, self.weight, self.eps)
