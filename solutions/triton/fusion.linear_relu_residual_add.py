"""Triton candidate for fusion.linear_relu_residual_add: x @ W^T + b, ReLU and the residual add in the
epilogue of one tiled matmul, so the [batch, out] intermediate never goes to memory (fp32, ieee dots)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_res_kernel(x_ptr, w_ptr, b_ptr, r_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None].to(tl.int64) * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        w = tl.load(w_ptr + rn[None, :].to(tl.int64) * K + kk[:, None], mask=(rn[None, :] < N) & (kk[:, None] < K),
                    other=0.0)  # W is [N, K]: this is the [BK, BN] tile of W^T
        acc = tl.dot(a, w, acc, input_precision="ieee")
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    res = tl.load(r_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(acc + bias[None, :], 0.0) + res, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        BM, BN, BK = 128, 128, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_relu_res_kernel[grid](x, self.linear.weight, self.linear.bias, residual, y, M, N, K,
                                     BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=3)
        return y
