"""CUDA candidate for pooling.global_avg_pool: one warp per (n, c) plane, 16-byte loads, shuffle reduction.

Each plane is contiguous (H*W floats), so a warp streams it with fully coalesced float4 loads when the
plane is 16-byte aligned, and scalar loads otherwise; the input is read exactly once."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void plane_mean(const float* __restrict__ x, float* __restrict__ y, long planes, int hw) {
    long warp = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= planes) return;
    const float* p = x + warp * hw;
    float acc = 0.f;
    if ((hw & 3) == 0 && (reinterpret_cast<uintptr_t>(p) & 15) == 0) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        for (int i = lane; i < hw / 4; i += 32) { float4 v = p4[i]; acc += (v.x + v.y) + (v.z + v.w); }
    } else {
        for (int i = lane; i < hw; i += 32) acc += p[i];
    }
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (lane == 0) y[warp] = acc / hw;
}

torch::Tensor gap(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 4 && x.scalar_type() == torch::kFloat32, "float32 NCHW expected");
    auto xc = x.contiguous();
    long planes = xc.size(0) * xc.size(1);
    int hw = xc.size(2) * xc.size(3);
    auto y = torch::empty({xc.size(0), xc.size(1), 1, 1}, xc.options());
    int threads = 256;
    long blocks = (planes * 32 + threads - 1) / threads;
    plane_mean<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), planes, hw);
    return y;
}
"""

_ext = load_inline(name="mkb_cuda_pooling_global_avg_pool", cpp_sources="torch::Tensor gap(torch::Tensor x);",
                   cuda_sources=cuda_src, functions=["gap"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gap(x)
