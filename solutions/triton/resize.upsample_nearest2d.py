"""Triton candidate for resize.upsample_nearest2d (integer scale): each program writes a block of output
rows' worth of pixels, reading the source pixel (H/scale, W/scale) once per output element from L2."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def up_nearest_kernel(x_ptr, y_ptr, H, W, OH, OW, total, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    ow = offs % OW
    t = offs // OW
    oh = t % OH
    plane = t // OH
    src = plane * H * W + (oh // SCALE) * W + (ow // SCALE)
    tl.store(y_ptr + offs, tl.load(x_ptr + src, mask=m), mask=m)


class ModelNew(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, h, w = x.shape
        oh, ow = h * self.scale, w * self.scale
        y = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
        total = y.numel()
        BLOCK = 2048
        up_nearest_kernel[(triton.cdiv(total, BLOCK),)](x, y, h, w, oh, ow, total, SCALE=self.scale, BLOCK=BLOCK,
                                                        num_warps=8)
        return y
