"""Triton exemplar: row-broadcast bias add on a 2-D grid (row, column block); the bias block is loaded once per program."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_add_kernel(x_ptr, b_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + row * cols + offs, x + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x, bias = x.contiguous(), bias.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        BLOCK = 1024
        _bias_add_kernel[(rows, triton.cdiv(cols, BLOCK))](x, bias, out, cols, BLOCK=BLOCK)
        return out
