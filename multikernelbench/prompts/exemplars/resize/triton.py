"""Triton exemplar: nearest 2x upsampling; each program writes BLOCK output pixels of one output row."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _upsample2x_kernel(x_ptr, out_ptr, h, w, BLOCK: tl.constexpr):
    out_row = tl.program_id(0)  # over planes * 2h output rows
    plane = out_row // (2 * h)
    src_row = (out_row % (2 * h)) // 2
    ox = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = ox < 2 * w
    vals = tl.load(x_ptr + (plane * h + src_row) * w + ox // 2, mask=mask)
    tl.store(out_ptr + out_row * 2 * w + ox, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, h, w = x.shape
        out = torch.empty(n, c, 2 * h, 2 * w, device=x.device, dtype=x.dtype)
        BLOCK = 256
        _upsample2x_kernel[(n * c * 2 * h, triton.cdiv(2 * w, BLOCK))](x, out, h, w, BLOCK=BLOCK)
        return out
