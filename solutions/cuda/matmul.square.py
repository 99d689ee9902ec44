"""CUDA candidate for matmul.square: fp32 SGEMM, 128x128x8 shared-memory tiles, 8x8 outputs per thread.

Register blocking gives each thread 64 FMAs per 16 shared-memory loads; A is stored transposed in shared
memory so both operand fetches are 16-byte vector loads. Full-precision fp32 FMA (no TF32), as the
task's fp32 tolerance requires. Edges are zero-padded on load and masked on store, so any n works."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;

__global__ void __launch_bounds__(256) tiled_mm_128x128(const float* __restrict__ A, const float* __restrict__ B,
                                                     float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int t = threadIdx.x;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int a_row = t >> 1, a_col = (t & 1) * 4;      // A tile: 128 rows x 8 k
    const int b_row = t >> 5, b_col = (t & 31) * 4;     // B tile: 8 k x 128 cols
    const int ty = t >> 4, tx = t & 15;
    float acc[TM][TN] = {};
    float ra[4], rb[4];

    auto load_global = [&](int k0) {
        #pragma unroll
        for (int c = 0; c < 4; ++c) {
            int gr = bm + a_row, gk = k0 + a_col + c;
            ra[c] = (gr < M && gk < K) ? A[(long)gr * K + gk] : 0.f;
            int bk = k0 + b_row, gc = bn + b_col + c;
            rb[c] = (bk < K && gc < N) ? B[(long)bk * N + gc] : 0.f;
        }
    };
    auto store_shared = [&](int s) {
        #pragma unroll
        for (int c = 0; c < 4; ++c) As[s][a_col + c][a_row] = ra[c];
        *reinterpret_cast<float4*>(&Bs[s][b_row][b_col]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
    };

    load_global(0);
    store_shared(0);
    __syncthreads();
    int s = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        bool more = k0 + BK < K;
        if (more) load_global(k0 + BK);   // next tile's global loads overlap this tile's math
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&As[s][k][ty * TM]);
            *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&As[s][k][ty * TM + 4]);
            *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(&Bs[s][k][tx * TN]);
            *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(&Bs[s][k][tx * TN + 4]);
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) { store_shared(s ^ 1); }
        __syncthreads();
        s ^= 1;
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        int r = bm + ty * TM + i;
        if (r >= M) continue;
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            int c = bn + tx * TN + j;
            if (c < N) C[(long)r * N + c] = acc[i][j];
        }
    }
}

torch::Tensor sgemm(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 only");
    auto ac = a.contiguous(), bc = b.contiguous();
    int M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::empty({M, N}, ac.options());
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    tiled_mm_128x128<<<grid, 256>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    return c;
}
"""

cpp_src = "torch::Tensor sgemm(torch::Tensor a, torch::Tensor b);"

_ext = load_inline(name="mkb_cuda_matmul_square", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["sgemm"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.sgemm(a, b)
