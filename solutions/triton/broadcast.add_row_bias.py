"""Triton candidate for broadcast.add_row_bias: 2-D tiles of x plus the matching bias slice (fp32)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_bias_kernel(x_ptr, b_ptr, y_ptr, rows, n, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < n)
    offs = r[:, None].to(tl.int64) * n + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + c, mask=c < n)
    tl.store(y_ptr + offs, x + b[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.shape[-1]
        rows = x.numel() // n
        y = torch.empty_like(x)
        BR, BC = 4, 1024
        grid = (triton.cdiv(rows, BR), triton.cdiv(n, BC))
        add_bias_kernel[grid](x, self.bias, y, rows, n, BR=BR, BC=BC, num_warps=4)
        return y
