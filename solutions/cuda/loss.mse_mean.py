"""CUDA candidate for loss.mse_mean: mean((pred - target)^2) as a deterministic two-stage reduction (fp32).

Stage 1: a fixed grid of blocks each reduces a grid-stride slice (16-byte loads when aligned) to one
partial sum; stage 2: one block sums the partials in a fixed order and divides by n. No atomics, so the
result is bitwise reproducible."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int THREADS = 512;
constexpr int BLOCKS = 132 * 4;

__device__ float block_sum(float v) {
    __shared__ float ws[THREADS / 32];
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < THREADS / 32 ? ws[threadIdx.x] : 0.f;
    if (threadIdx.x < 32) {
        #pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    }
    return v;
}

__global__ void sq_diff_partial(const float* __restrict__ a, const float* __restrict__ b, float* partial,
                                long n, bool vec) {
    float acc = 0.f;
    long tid = blockIdx.x * (long)THREADS + threadIdx.x, stride = (long)gridDim.x * THREADS;
    long n4 = vec ? n / 4 : 0;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    for (long i = tid; i < n4; i += stride) {
        float4 x = a4[i], y = b4[i];
        float d0 = x.x - y.x, d1 = x.y - y.y, d2 = x.z - y.z, d3 = x.w - y.w;
        acc += d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3;
    }
    for (long i = n4 * 4 + tid; i < n; i += stride) { float d = a[i] - b[i]; acc += d * d; }
    float s = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void finish(const float* partial, float* out, int m, long n) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < m; i += THREADS) acc += partial[i];
    float s = block_sum(acc);
    if (threadIdx.x == 0) out[0] = s / (float)n;
}

torch::Tensor mse_mean(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    auto ac = a.contiguous(), bc = b.contiguous();
    long n = ac.numel();
    auto partial = torch::empty({BLOCKS}, ac.options());
    auto out = torch::empty({}, ac.options());
    bool vec = reinterpret_cast<uintptr_t>(ac.data_ptr<float>()) % 16 == 0 &&
               reinterpret_cast<uintptr_t>(bc.data_ptr<float>()) % 16 == 0;
    sq_diff_partial<<<BLOCKS, THREADS>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), partial.data_ptr<float>(), n, vec);
    finish<<<1, THREADS>>>(partial.data_ptr<float>(), out.data_ptr<float>(), BLOCKS, n);
    return out;
}
"""

cpp_src = "torch::Tensor mse_mean(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(name="mkb_cuda_loss_mse_mean", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["mse_mean"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return _ext.mse_mean(pred, target)
