"""Helion exemplar: 1-D max pooling (kernel 3, stride 2); tiles of output positions gather their three window
elements with index arithmetic on the tile's indices (tile.index)."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[4, 64]))
def _max_pool3s2(x: torch.Tensor) -> torch.Tensor:
    planes, length = x.size()
    out_len = (length - 3) // 2 + 1
    out = torch.empty([planes, out_len], dtype=x.dtype, device=x.device)
    for tp, to in hl.tile([planes, out_len]):
        start = to.index * 2
        best = torch.maximum(x[tp, start], x[tp, start + 1])
        out[tp, to] = torch.maximum(best, x[tp, start + 2])
    return out


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        if (kernel_size, stride) != (3, 2):
            raise ValueError("this kernel is written for kernel_size=3, stride=2 (the task's fixed values)")
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, length = x.shape
        return _max_pool3s2(x.contiguous().view(b * c, length)).view(b, c, -1)
