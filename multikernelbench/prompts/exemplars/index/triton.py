"""Triton exemplar: row gather; one program per (picked row, column block) reads its index then copies."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_rows_kernel(table_ptr, idx_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < dim
    src_row = tl.load(idx_ptr + i)  # int64 index
    vals = tl.load(table_ptr + src_row * dim + offs, mask=mask)
    tl.store(out_ptr + i * dim + offs, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        table, idx = table.contiguous(), idx.contiguous()
        dim = table.shape[1]
        out = torch.empty(idx.numel(), dim, device=table.device, dtype=table.dtype)
        BLOCK = 512
        _gather_rows_kernel[(idx.numel(), triton.cdiv(dim, BLOCK))](table, idx, out, dim, BLOCK=BLOCK)
        return out
