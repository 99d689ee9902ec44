"""CUDA exemplar: Linear + ReLU fused; a tiled x @ W^T whose epilogue adds the bias and applies ReLU."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = "torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

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

torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x: float32 CUDA tensor expected");
    TORCH_CHECK(weight.is_cuda() && weight.scalar_type() == torch::kFloat32, "weight: float32 CUDA tensor expected");
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat32, "bias: float32 CUDA tensor expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "shape mismatch");
    auto xc = x.contiguous(), wc = weight.contiguous(), bc = bias.contiguous();
    auto out = torch::empty({xc.size(0), wc.size(0)}, xc.options());
    // W is (N, K): W^T[k, n] = w[n * K + k]
    launch_tiled(xc, wc.data_ptr<float>(), 1, wc.size(1), bc.data_ptr<float>(), out, true);
    return out;
}
"""

_ext = load_inline(name="mkb_exemplar_cuda_fusion", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["linear_relu_forward"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # weight holder, seeded like the reference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.linear_relu_forward(x, self.linear.weight, self.linear.bias)
