"""index_select along dim 0: a grid-stride loop over the output, each element read through the index."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def gather_kernel(x, idx, y, k, dim):
    for i in range(cuda.grid(1), k * dim, cuda.gridsize(1)):
        r = i // dim
        c = i - r * dim
        y[r, c] = x[idx[r], c]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        x, index = x.contiguous(), index.contiguous()
        k, dim = index.numel(), x.shape[1]
        y = torch.empty((k, dim), device=x.device, dtype=x.dtype)
        gather_kernel[grid_blocks(k * dim, 256), 256, torch_stream()](as_array(x), as_array(index), as_array(y), k, dim)
        return y
