"""Triton exemplar: Linear + ReLU fused; a tiled x @ W^T (W read through its strides) with bias and ReLU in the epilogue."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_relu_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, stride_xm, stride_wn,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * stride_xm + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        wt = tl.load(w_ptr + rn[None, :] * stride_wn + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N),
                     other=0.0)  # (BK, BN) tile of W^T
        acc += tl.dot(x, wt, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # weight holder, seeded like the reference

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w, b = self.linear.weight.contiguous(), self.linear.bias.contiguous()
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty(M, N, device=x.device, dtype=x.dtype)
        BM, BN, BK = 32, 64, 32
        _linear_relu_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, w, b, out, M, N, K, x.stride(0), w.stride(0),
                                                                      BM=BM, BN=BN, BK=BK)
        return out
