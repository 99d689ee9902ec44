# task: matmul.square
"""Honest twin of solutions/cuda/wrong/memo_by_content_matmul.py for matmul.square (fp32): the same
32x32-tiled SGEMM, byte for byte the same ``tiled_mm32``/``honest_mm`` code, with no fingerprint and no memo.
On the GPU machine the tricked candidate must time at this kernel's speed once every timed call sees fresh
data. Kept under tests/data/, not solutions/cuda/, so no solutions scan picks it up."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

// ---- the honest kernel (identical in the twin) ----------------------------------------------------------
// C = A @ B, n x n, fp32 FMA (no TF32). One 32x32 output tile per block, one output per thread; A and B
// tiles staged through shared memory, zero-padded at the edges, so any n works.
constexpr int TILE = 32;

__global__ void tiled_mm32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                           int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && ka < n) ? A[(long)row * n + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < n && col < n) ? B[(long)kb * n + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < n && col < n) C[(long)row * n + col] = acc;
}

static torch::Tensor honest_mm(const torch::Tensor& ac, const torch::Tensor& bc) {
    const int n = (int)ac.size(0);
    auto c = torch::empty({n, n}, ac.options());
    if (n == 0) return c;
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    tiled_mm32<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(ac.data_ptr<float>(), bc.data_ptr<float>(),
                                                                     c.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}

static void check_inputs(const torch::Tensor& a, const torch::Tensor& b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "CUDA tensors only");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(0) == a.size(1) && b.size(0) == a.size(0) &&
                b.size(1) == a.size(0), "two square matrices of one size");
}
// ---- end of the honest kernel ----------------------------------------------------------------------------

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    check_inputs(a, b);
    auto ac = a.contiguous(), bc = b.contiguous();
    return honest_mm(ac, bc);
}
"""

cpp_src = "torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(name="mkb_cuda_twin_tiled_matmul", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["mm_forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm_forward(a, b)
