"""1x1 convolution with bias: per pixel a (cout x cin) matrix-vector product; a grid-stride loop over the
(batch, cout, pixel) output with neighbouring threads on neighbouring pixels (coalesced reads of x)."""

import numba
import torch
import torch.nn as nn
from numba import cuda

from multikernelbench.interop.numba_cuda import as_array, grid_blocks, torch_stream


@cuda.jit
def conv1x1_kernel(x, w, bias, y, batch, cin, cout, hw):
    for i in range(cuda.grid(1), batch * cout * hw, cuda.gridsize(1)):
        b = i // (cout * hw)
        rem = i - b * cout * hw
        co = rem // hw
        p = rem - co * hw
        acc = numba.float32(bias[co])
        for ci in range(cin):
            acc += w[co, ci] * x[b, ci, p]
        y[b, co, p] = acc


class ModelNew(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__()
        if groups != 1:
            raise ValueError("this kernel handles groups=1 (the task's value)")
        self.conv = nn.Conv2d(cin, cout, (1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=groups,
                              bias=True)  # holds the weights; never called

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        batch, cin, h, w = x.shape
        weight = self.conv.weight.detach().reshape(self.conv.out_channels, cin).contiguous()
        bias = self.conv.bias.detach().contiguous()
        cout = weight.shape[0]
        y = torch.empty((batch, cout, h, w), device=x.device, dtype=x.dtype)
        conv1x1_kernel[grid_blocks(y.numel(), 256), 256, torch_stream()](
            as_array(x.view(batch, cin, h * w)), as_array(weight), as_array(bias), as_array(y.view(batch, cout, h * w)),
            batch, cin, cout, h * w)
        return y
