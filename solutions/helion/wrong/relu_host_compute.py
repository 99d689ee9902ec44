# task: activation.relu
# expect: cheat_detected
"""Deliberately cheating: torch.relu runs on the host part of the Helion kernel (outside hl.tile, plain
PyTorch); the tile loop only copies its result."""

import helion
import helion.language as hl
import torch
import torch.nn as nn


@helion.kernel(config=helion.Config(block_sizes=[8, 256]))
def relu_kernel(x: torch.Tensor) -> torch.Tensor:
    r = torch.relu(x)
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = r[tile]
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        return relu_kernel(x.contiguous())
