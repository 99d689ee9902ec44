"""index_select along dim 0: the index tile picks the rows, the column tile the columns (a gather load)."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[8, 128]))
def gather_kernel(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    k = index.size(0)
    dim = x.size(1)
    out = torch.empty([k, dim], dtype=x.dtype, device=x.device)
    for tk, td in hl.tile([k, dim]):
        out[tk, td] = x[index[tk], td]
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return gather_kernel(x.contiguous(), index.contiguous())
