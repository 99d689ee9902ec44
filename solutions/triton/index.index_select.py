"""Triton candidate for index.index_select: each program copies one selected row in column blocks."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gather_kernel(x_ptr, idx_ptr, y_ptr, dim, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    src = tl.load(idx_ptr + row)
    for c in range(0, dim, BLOCK):
        cols = c + tl.arange(0, BLOCK)
        m = cols < dim
        tl.store(y_ptr + row * dim + cols, tl.load(x_ptr + src * dim + cols, mask=m), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        k, dim = index.numel(), x.shape[1]
        y = torch.empty((k, dim), device=x.device, dtype=x.dtype)
        BLOCK = min(1024, triton.next_power_of_2(dim))
        if k:
            gather_kernel[(k,)](x, index.contiguous(), y, dim, BLOCK=BLOCK, num_warps=4)
        return y
