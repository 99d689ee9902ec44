"""CUDA exemplar: shared-memory tiled matmul (16x16 tiles, fp32 FMA; no TF32), edges zero-filled."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
constexpr int TILE = 16;

// C[M, N] = A[M, K] @ B (+ bias, ReLU). B is read as B[k, n] = b[k * sbk + n * sbn], so the same kernel serves
// a plain (K, N) matrix and a transposed (N, K) nn.Linear weight. Shared-memory tiles, zero-filled at edges.
__global__ void tiled_matmul_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                    const float* __restrict__ bias, float* __restrict__ c, int64_t M, int64_t N,
                                    int64_t K, int64_t sbk, int64_t sbn, bool relu) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE + 1];
    const int64_t row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int64_t k0 = 0; k0 < K; k0 += TILE) {
        const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[row * K + ka] : 0.f;
        bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[kb * sbk + col * sbn] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        if (bias != nullptr) acc += bias[col];
        if (relu) acc = fmaxf(acc, 0.f);
        c[row * N + col] = acc;
    }
}

static void launch_tiled(const torch::Tensor& a, const float* b, int64_t sbk, int64_t sbn, const float* bias,
                         torch::Tensor& c, bool relu) {
    const int64_t M = a.size(0), K = a.size(1), N = c.size(1);
    if (c.numel() == 0) return;
    dim3 block(TILE, TILE), grid((unsigned)((N + TILE - 1) / TILE), (unsigned)((M + TILE - 1) / TILE));
    auto stream = at::cuda::getCurrentCUDAStream();
    tiled_matmul_kernel<<<grid, block, 0, stream>>>(a.data_ptr<float>(), b, bias, c.data_ptr<float>(), M, N, K, sbk,
                                                    sbn, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && a.scalar_type() == torch::kFloat32, "a: float32 CUDA tensor expected");
    TORCH_CHECK(b.is_cuda() && b.scalar_type() == torch::kFloat32, "b: float32 CUDA tensor expected");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "(M, K) @ (K, N) expected");
    auto ac = a.contiguous(), bc = b.contiguous();
    auto c = torch::empty({ac.size(0), bc.size(1)}, ac.options());
    launch_tiled(ac, bc.data_ptr<float>(), bc.size(1), 1, nullptr, c, false);
    return c;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_matmul", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["matmul_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_forward(a, b)
