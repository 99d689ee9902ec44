# task: activation.relu
# expect: runtime_error
"""Deliberately wrong: one block size for a two-dimensional hl.tile; Helion rejects the config at the first
call."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[256]))
def relu_kernel(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = torch.relu(x[tile])
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_kernel(x.contiguous())
