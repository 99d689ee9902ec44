"""Triton candidate for math.cumsum: one program per row, block-wise tl.cumsum with a running carry (fp32)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, L, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, L, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < L
        x = tl.load(x_ptr + row * L + offs, mask=m, other=0.0)
        s = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * L + offs, s, mask=m)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        L = x.shape[-1]
        rows = x.numel() // L
        y = torch.empty_like(x)
        BLOCK = min(2048, triton.next_power_of_2(L))
        cumsum_kernel[(rows,)](x, y, L, BLOCK=BLOCK, num_warps=4)
        return y
