"""CUDA candidate for reduce.sum_dim: sum over the middle axis of [B, R, I], keepdim (fp32).

Block (32 x 8): x runs along the contiguous inner axis (coalesced 128-byte rows), y splits R into 8
strided partial sums that are combined in shared memory; each input element is read exactly once."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int BX = 32, BY = 8;

__global__ void sum_mid(const float* __restrict__ x, float* __restrict__ y, int R, int I) {
    __shared__ float part[BY][BX + 1];
    int i = blockIdx.x * BX + threadIdx.x;
    int b = blockIdx.y;
    float acc = 0.f;
    if (i < I) {
        const float* base = x + (long)b * R * I + i;
        int r = threadIdx.y;
        // 4 independent loads in flight per iteration
        for (; r + 3 * BY < R; r += 4 * BY) {
            float a0 = base[(long)r * I], a1 = base[(long)(r + BY) * I];
            float a2 = base[(long)(r + 2 * BY) * I], a3 = base[(long)(r + 3 * BY) * I];
            acc += (a0 + a1) + (a2 + a3);
        }
        for (; r < R; r += BY) acc += base[(long)r * I];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && i < I) {
        float s = 0.f;
        #pragma unroll
        for (int k = 0; k < BY; ++k) s += part[k][threadIdx.x];
        y[(long)b * I + i] = s;
    }
}

torch::Tensor sum_dim1(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 3 && x.scalar_type() == torch::kFloat32, "float32 [B, R, I] expected");
    auto xc = x.contiguous();
    int B = xc.size(0), R = xc.size(1), I = xc.size(2);
    auto y = torch::empty({B, 1, I}, xc.options());
    dim3 block(BX, BY), grid((I + BX - 1) / BX, B);
    sum_mid<<<grid, block>>>(xc.data_ptr<float>(), y.data_ptr<float>(), R, I);
    return y;
}
"""

cpp_src = "torch::Tensor sum_dim1(torch::Tensor x);"

_ext = load_inline(name="mkb_cuda_reduce_sum_dim", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["sum_dim1"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim1(x)
