"""Numba-CUDA exemplar: nearest-neighbour 2x upsampling; a grid-stride loop over the flattened output, each
element copying its source pixel (oy // 2, ox // 2)."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def _upsample2x_kernel(x, out, planes, h, w):
    oh, ow = 2 * h, 2 * w
    for i in range(cuda.grid(1), planes * oh * ow, cuda.gridsize(1)):
        p = i // (oh * ow)
        rem = i - p * oh * ow
        oy = rem // ow
        ox = rem - oy * ow
        out[p, oy, ox] = x[p, oy // 2, ox // 2]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        b, c, h, w = x.shape
        out = torch.empty(b, c, 2 * h, 2 * w, device=x.device, dtype=x.dtype)
        planes = b * c
        _upsample2x_kernel[grid_blocks(planes * 4 * h * w, 256), 256, torch_stream()](
            as_array(x.view(planes, h, w)), as_array(out.view(planes, 2 * h, 2 * w)), planes, h, w)
        return out
