# task: activation.relu
# expect: runtime_error
# reason: File too large
"""Fault: prints 1 GB to stdout (the worker's capped stdout file ends it early)."""

import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        chunk = "x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.write(chunk)
        return torch.clamp_min(x, 0.0)
