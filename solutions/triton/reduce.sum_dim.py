"""Triton candidate for reduce.sum_dim: sum over the middle axis of [B, R, I], keepdim (fp32).

Each program owns a [BR, BI] window sliding down R for one batch and a 128-wide slice of the contiguous
inner axis, so loads are coalesced and every element is read once."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_mid_kernel(x_ptr, y_ptr, R, I, BR: tl.constexpr, BI: tl.constexpr):
    b = tl.program_id(0)
    i = tl.program_id(1) * BI + tl.arange(0, BI)
    acc = tl.zeros([BR, BI], dtype=tl.float32)
    base = x_ptr + b.to(tl.int64) * R * I
    for r0 in range(0, R, BR):
        r = r0 + tl.arange(0, BR)
        mask = (r[:, None] < R) & (i[None, :] < I)
        acc += tl.load(base + r[:, None].to(tl.int64) * I + i[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + b.to(tl.int64) * I + i, tl.sum(acc, axis=0), mask=i < I)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, I = x.shape
        y = torch.empty((B, 1, I), device=x.device, dtype=x.dtype)
        BI, BR = 128, 32
        sum_mid_kernel[(B, triton.cdiv(I, BI))](x, y, R, I, BR=BR, BI=BI, num_warps=4)
        return y
