"""Triton candidate for normalization.rms_norm: one program per row held in registers (fp32).

The whole row (padded to a power of two) is loaded once, so x is read exactly once and y written once."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, H, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < H
    x = tl.load(x_ptr + row * H + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H + eps)
    tl.store(y_ptr + row * H + cols, x * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        H = x.shape[-1]
        rows = x.numel() // H
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(H)
        rms_norm_kernel[(rows,)](x, self.weight, y, H, self.eps, BLOCK=BLOCK, num_warps=8 if BLOCK >= 4096 else 4)
        return y
