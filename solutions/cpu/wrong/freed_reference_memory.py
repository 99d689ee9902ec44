# task: activation.relu
# expect: incorrect
# reason: values outside atol || NaN value(s) where the reference has none
"""Exploit: returns uninitialised memory, hoping the allocator hands back the reference's freed output.
The candidate runs before the reference in its worker, and never after it on the same inputs."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)
