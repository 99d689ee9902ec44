# task: activation.relu
# expect: incorrect
"""Deliberately wrong: clamps at 0.1 instead of 0."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[8, 256]))
def relu_kernel(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = torch.clamp_min(x[tile], 0.1)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_kernel(x.contiguous())
