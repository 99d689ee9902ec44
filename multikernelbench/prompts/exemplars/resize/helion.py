"""Helion exemplar: nearest-neighbour 2x upsampling; tiles of output pixels read their source pixel at
(tile.index // 2) in each spatial dimension."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[1, 8, 64]))
def _upsample2x(x: torch.Tensor) -> torch.Tensor:
    planes, h, w = x.size()
    out = torch.empty([planes, 2 * h, 2 * w], dtype=x.dtype, device=x.device)
    for tp, ty, tx in hl.tile([planes, 2 * h, 2 * w]):
        out[tp, ty, tx] = x[tp, ty.index // 2, tx.index // 2]
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        return _upsample2x(x.contiguous().view(b * c, h, w)).view(b, c, 2 * h, 2 * w)
