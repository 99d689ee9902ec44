"""Triton candidate for matmul.square: tiled fp32 matmul with full-precision dots (no TF32).

128x128 output tiles, K stepped by 32 with software pipelining; grouped program order so consecutive
programs share A row-panels in L2. input_precision="ieee" keeps fp32 accuracy (Triton's default for fp32
dots is TF32, which the task's tolerance rejects at large K)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP: tl.constexpr):
    pid = tl.program_id(0)
    num_m, num_n = (M + BM - 1) // BM, (N + BN - 1) // BN
    group = pid // (GROUP * num_n)
    first_m = group * GROUP
    size_m = min(num_m - first_m, GROUP)
    pid_m = first_m + (pid % size_m)
    pid_n = (pid % (GROUP * num_n)) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None].to(tl.int64) * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=torch.float32)
        BM, BN, BK = 128, 128, 32
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        matmul_kernel[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=8, num_warps=8, num_stages=3)
        return c
