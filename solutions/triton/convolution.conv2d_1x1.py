"""Triton candidate for convolution.conv2d_1x1: a pointwise convolution is, per image, the matmul
W[cout, cin] @ X[cin, H*W]; tiled with the bias added in the epilogue (fp32, ieee dots), reading the
NCHW input in place (no im2col, no layout change)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv1x1_kernel(x_ptr, w_ptr, b_ptr, y_ptr, CO, CI, P, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n, n = tl.program_id(0), tl.program_id(1), tl.program_id(2).to(tl.int64)
    rm = pid_m * BM + tl.arange(0, BM)     # output channels
    rp = pid_n * BN + tl.arange(0, BN)     # pixels
    rk = tl.arange(0, BK)
    xb = x_ptr + n * CI * P
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, CI, BK):
        kk = k0 + rk
        w = tl.load(w_ptr + rm[:, None] * CI + kk[None, :], mask=(rm[:, None] < CO) & (kk[None, :] < CI), other=0.0)
        x = tl.load(xb + kk[:, None].to(tl.int64) * P + rp[None, :], mask=(kk[:, None] < CI) & (rp[None, :] < P),
                    other=0.0)
        acc = tl.dot(w, x, acc, input_precision="ieee")
    bias = tl.load(b_ptr + rm, mask=rm < CO, other=0.0)
    tl.store(y_ptr + n * CO * P + rm[:, None].to(tl.int64) * P + rp[None, :], acc + bias[:, None],
             mask=(rm[:, None] < CO) & (rp[None, :] < P))


class ModelNew(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, (1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=groups,
                              bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.conv.groups == 1
        x = x.contiguous()
        n, ci, h, w = x.shape
        co = self.conv.out_channels
        y = torch.empty((n, co, h, w), device=x.device, dtype=torch.float32)
        BM, BN, BK = 64, 128, 32
        grid = (triton.cdiv(co, BM), triton.cdiv(h * w, BN), n)
        conv1x1_kernel[grid](x, self.conv.weight, self.conv.bias, y, co, ci, h * w, BM=BM, BN=BN, BK=BK, num_warps=4,
                             num_stages=3)
        return y
