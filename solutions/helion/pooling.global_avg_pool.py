"""Mean over (H, W): planes viewed as rows of h*w; a tile of rows per program reduces whole rows."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[4]))
def mean_rows_kernel(x: torch.Tensor) -> torch.Tensor:
    planes, hw = x.size()
    out = torch.empty([planes], dtype=x.dtype, device=x.device)
    for tp in hl.tile(planes):
        out[tp] = x[tp, :].sum(1) / hw
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        return mean_rows_kernel(x.contiguous().view(b * c, h * w)).view(b, c, 1, 1)
