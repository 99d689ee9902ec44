# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: calls the kernel like a function, without [blocks, threads]; Numba refuses the launch."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def relu_kernel(x, y, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = x[i]
        y[i] = v if v > 0 else 0.0


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_kernel(as_array(x.view(-1)), as_array(y.view(-1)), x.numel())
        return y
