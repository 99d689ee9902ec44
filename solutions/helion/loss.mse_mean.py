"""MSE (mean) in two deterministic passes: per-row sums of squared differences, then one program adds the
row sums and divides by the element count."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[4]))
def row_sq_diff_kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    rows, cols = a.size()
    out = torch.empty([rows], dtype=a.dtype, device=a.device)
    for tr in hl.tile(rows):
        d = a[tr, :] - b[tr, :]
        out[tr] = (d * d).sum(1)
    return out


@helion.kernel(config=helion.Config(block_sizes=[1]))
def mean_kernel(partial: torch.Tensor, count: int) -> torch.Tensor:
    one, rows = partial.size()
    out = torch.empty([one], dtype=partial.dtype, device=partial.device)
    for t in hl.tile(one):
        out[t] = partial[t, :].sum(1) / count
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        partial = row_sq_diff_kernel(pred.contiguous(), target.contiguous())
        return mean_kernel(partial.view(1, -1), pred.numel()).view(())
