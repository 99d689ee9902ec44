"""Numba-CUDA exemplar: elementwise add; a grid-stride loop over the flattened tensors, launched on torch's
stream with zero-copy views of the tensors' memory."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def _add_kernel(a, b, out, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = a[i] + b[i]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        _add_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(a.view(-1)), as_array(b.view(-1)),
                                                              as_array(out.view(-1)), n)
        return out
