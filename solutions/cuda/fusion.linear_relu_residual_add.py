"""CUDA candidate for fusion.linear_relu_residual_add: x @ W^T + b, ReLU and the residual add fused into
the epilogue of one fp32 SGEMM (128x128x8 tiles, 8x8 per thread, double-buffered shared memory), so the
linear output never goes to memory. Full fp32 FMA (no TF32), as the task's tolerance requires."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// C[b] = epilogue(A[b] @ op(B[b])): 128x128x8 tiles, 8x8 outputs per thread, double-buffered shared memory.
// B_T: B is stored [N, K] (a Linear weight) instead of [K, N]. Batch strides may be 0 (shared operand).
// Epilogue: + bias[col] (bias_mode 1) or + bias[row] (bias_mode 2), ReLU, + residual[row, col].
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;

template <bool B_T>
__global__ void __launch_bounds__(256) tiled_mm_epi(const float* __restrict__ A, const float* __restrict__ B,
        float* __restrict__ C, const float* __restrict__ bias, const float* __restrict__ res,
        int M, int N, int K, long sA, long sB, long sC, int bias_mode, int relu) {
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const long bz = blockIdx.z;
    A += bz * sA; B += bz * sB; C += bz * sC;
    if (res) res += bz * sC;
    const int t = threadIdx.x;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int a_row = t >> 1, a_col = (t & 1) * 4;
    const int b_row = t >> 5, b_col = (t & 31) * 4;
    const int ty = t >> 4, tx = t & 15;
    float acc[TM][TN] = {};
    float ra[4], rb[4];
    auto load_global = [&](int k0) {
        #pragma unroll
        for (int c = 0; c < 4; ++c) {
            int gr = bm + a_row, gk = k0 + a_col + c;
            ra[c] = (gr < M && gk < K) ? A[(long)gr * K + gk] : 0.f;
            if (B_T) {  // W rows are B's columns: read them like A (two threads per row, 4 consecutive k each)
                int gn = bn + a_row, wk = k0 + a_col + c;
                rb[c] = (gn < N && wk < K) ? B[(long)gn * K + wk] : 0.f;
            } else {
                int bk = k0 + b_row, gc = bn + b_col + c;
                rb[c] = (bk < K && gc < N) ? B[(long)bk * N + gc] : 0.f;
            }
        }
    };
    auto store_shared = [&](int s) {
        #pragma unroll
        for (int c = 0; c < 4; ++c) As[s][a_col + c][a_row] = ra[c];
        if (B_T) {
            #pragma unroll
            for (int c = 0; c < 4; ++c) Bs[s][a_col + c][a_row] = rb[c];
        } else {
            *reinterpret_cast<float4*>(&Bs[s][b_row][b_col]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
        }
    };
    load_global(0);
    store_shared(0);
    __syncthreads();
    int s = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        bool more = k0 + BK < K;
        if (more) load_global(k0 + BK);
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
        if (more) store_shared(s ^ 1);
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
            if (c >= N) continue;
            float v = acc[i][j];
            if (bias_mode == 1) v += bias[c];
            else if (bias_mode == 2) v += bias[r];
            if (relu) v = fmaxf(v, 0.f);
            if (res) v += res[(long)r * N + c];
            C[(long)r * N + c] = v;
        }
    }
}

static void launch_mm(bool b_t, const float* A, const float* B, float* C, const float* bias, const float* res,
                      int M, int N, int K, int batch, long sA, long sB, long sC, int bias_mode, int relu) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, batch);
    if (b_t) tiled_mm_epi<true><<<grid, 256>>>(A, B, C, bias, res, M, N, K, sA, sB, sC, bias_mode, relu);
    else     tiled_mm_epi<false><<<grid, 256>>>(A, B, C, bias, res, M, N, K, sA, sB, sC, bias_mode, relu);
}

torch::Tensor linear_relu_res(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor r) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous(), rc = r.contiguous();
    int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    launch_mm(true, xc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(), bc.data_ptr<float>(),
              rc.data_ptr<float>(), M, N, K, 1, 0, 0, 0, 1, 1);
    return y;
}
"""

cpp_src = "torch::Tensor linear_relu_res(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor r);"

_ext = load_inline(name="mkb_cuda_fusion_linear_relu_residual_add", cpp_sources=cpp_src, cuda_sources=cuda_src,
                   functions=["linear_relu_res"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return _ext.linear_relu_res(x, self.linear.weight, self.linear.bias, residual)
