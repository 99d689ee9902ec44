"""Nearest-neighbour upsampling by an integer scale: a grid-stride loop over the output pixels."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def upsample_kernel(x, y, planes, h, w, scale):
    oh, ow = h * scale, w * scale
    for i in range(cuda.grid(1), planes * oh * ow, cuda.gridsize(1)):
        p = i // (oh * ow)
        rem = i - p * oh * ow
        oy = rem // ow
        ox = rem - oy * ow
        y[p, oy, ox] = x[p, oy // scale, ox // scale]


class ModelNew(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n, c, h, w = x.shape
        s = self.scale
        y = torch.empty((n, c, h * s, w * s), device=x.device, dtype=x.dtype)
        planes = n * c
        upsample_kernel[grid_blocks(y.numel(), 256), 256, torch_stream()](
            as_array(x.view(planes, h, w)), as_array(y.view(planes, h * s, w * s)), planes, h, w, s)
        return y
