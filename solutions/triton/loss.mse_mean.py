"""Triton candidate for loss.mse_mean: deterministic two-stage mean of squared differences (fp32).

Stage 1: each of a fixed number of programs walks a strided set of 4096-element blocks and writes one
partial sum; stage 2: one program sums the partials in a fixed order and divides by n."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_kernel(a_ptr, b_ptr, part_ptr, n, nprog, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    nblocks = (n + BLOCK - 1) // BLOCK
    for blk in range(pid, nblocks, nprog):
        offs = blk * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
        m = offs < n
        d = tl.load(a_ptr + offs, mask=m, other=0.0) - tl.load(b_ptr + offs, mask=m, other=0.0)
        acc += d * d
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(part_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = tl.load(part_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        a, b = pred.contiguous(), target.contiguous()
        n = a.numel()
        BLOCK = 4096
        nprog = max(1, min(1024, triton.cdiv(n, BLOCK)))
        part = torch.empty(nprog, device=a.device, dtype=torch.float32)
        out = torch.empty((), device=a.device, dtype=torch.float32)
        partial_kernel[(nprog,)](a, b, part, n, nprog, BLOCK=BLOCK, num_warps=8)
        finish_kernel[(1,)](part, out, nprog, n, BLOCK=1024)
        return out
