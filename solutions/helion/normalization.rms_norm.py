"""RMS norm over the last dimension: a tile of whole rows per program; mean of squares, 1/sqrt, weight."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[4]))
def rms_norm_kernel(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    rows, dim = x.size()
    out = torch.empty_like(x)
    for tr in hl.tile(rows):
        row = x[tr, :]
        inv = 1.0 / torch.sqrt((row * row).sum(1) / dim + eps)
        out[tr, :] = row * inv[:, None] * weight[None, :]
    return out


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        return rms_norm_kernel(x.contiguous().view(-1, dim), self.weight.detach(), self.eps).view(x.shape)
