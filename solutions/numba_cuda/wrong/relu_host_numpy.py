# task: activation.relu
# expect: cheat_detected
"""Deliberately cheating: computes ReLU with numpy on the host and launches a copy kernel to look honest."""

import numpy as np
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
        host = torch.from_numpy(np.maximum(x.detach().cpu().numpy(), 0.0)).to(x.device)
        y = torch.empty_like(host)
        n = y.numel()
        copy_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(host.view(-1)), as_array(y.view(-1)), n)
        return y
