# task: activation.relu
# expect: cheat_detected
"""Deliberately cheating: torch.relu does the work; a Numba kernel copies its result so a kernel does run."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def copy_kernel(x, y, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        y[i] = x[i]


class ModelNew(nn.Module):
    def forward(self, x):
        r = torch.relu(x).contiguous()
        y = torch.empty_like(r)
        n = y.numel()
        copy_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(r.view(-1)), as_array(y.view(-1)), n)
        return y
