"""relu(x @ W^T + b) + residual in one kernel: a grid-stride loop over the output, each element a float32
dot product with the epilogue applied before the single store."""

import numba
import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def linear_relu_add_kernel(x, w, bias, res, y, batch, fin, fout):
    for i in range(cuda.grid(1), batch * fout, cuda.gridsize(1)):
        r = i // fout
        c = i - r * fout
        acc = numba.float32(bias[c])
        for t in range(fin):
            acc += x[r, t] * w[c, t]
        y[r, c] = max(acc, 0.0) + res[r, c]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # holds the parameters; never called

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        w, b = self.linear.weight.detach().contiguous(), self.linear.bias.detach().contiguous()
        batch, fin = x.shape
        fout = w.shape[0]
        y = torch.empty((batch, fout), device=x.device, dtype=x.dtype)
        linear_relu_add_kernel[grid_blocks(batch * fout, 256), 256, torch_stream()](
            as_array(x), as_array(w), as_array(b), as_array(residual), as_array(y), batch, fin, fout)
        return y
