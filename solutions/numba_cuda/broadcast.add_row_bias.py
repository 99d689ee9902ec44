"""x + bias over the last dimension: a grid-stride loop, the bias index recovered with a modulo."""

import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def add_bias_kernel(x, bias, y, n, dim):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        y[i] = x[i] + bias[i % dim]


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        add_bias_kernel[grid_blocks(n, 256), 256, torch_stream()](as_array(x.view(-1)), as_array(self.bias.detach()),
                                                                  as_array(y.view(-1)), n, x.shape[-1])
        return y
