# task: activation.relu
# expect: incorrect
"""Deliberately wrong: the grid-stride loop stops one element short, so the last output is never written."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def relu_kernel(x, y, n):
    for i in range(cuda.grid(1), n - 1, cuda.gridsize(1)):
        v = x[i]
        y[i] = v if v > 0 else 0.0


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.zeros_like(x)
        n = x.numel()
        relu_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(x.view(-1)), as_array(y.view(-1)), n)
        return y
