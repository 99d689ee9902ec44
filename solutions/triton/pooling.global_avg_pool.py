"""Triton candidate for pooling.global_avg_pool: one program per (n, c) plane, chunked sum over H*W."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gap_kernel(x_ptr, y_ptr, hw, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, hw, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + plane * hw + offs, mask=offs < hw, other=0.0)
    tl.store(y_ptr + plane, tl.sum(acc, axis=0) / hw)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, h, w = x.shape
        y = torch.empty((n, c, 1, 1), device=x.device, dtype=x.dtype)
        BLOCK = min(4096, triton.next_power_of_2(h * w))
        gap_kernel[(n * c,)](x, y, h * w, BLOCK=BLOCK, num_warps=4)
        return y
