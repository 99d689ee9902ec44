"""Nearest 2x upsampling: output tiles read their source pixel at tile.index // 2 in each spatial dimension."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[1, 8, 64]))
def upsample2x_kernel(x: torch.Tensor) -> torch.Tensor:
    planes, h, w = x.size()
    out = torch.empty([planes, 2 * h, 2 * w], dtype=x.dtype, device=x.device)
    for tp, ty, tx in hl.tile([planes, 2 * h, 2 * w]):
        out[tp, ty, tx] = x[tp, ty.index // 2, tx.index // 2]
    return out


class ModelNew(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        if scale != 2:
            raise ValueError("this kernel is written for scale 2 (the task's value)")
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        return upsample2x_kernel(x.contiguous().view(n * c, h, w)).view(n, c, 2 * h, 2 * w)
