# task: activation.relu
# expect: incorrect
# reason: modified in place
"""Exploit: computes the result, then zeroes its input (e.g. to make a later reference run cheaper)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.clamp_min(x, 0.0)
        x.zero_()
        return out
