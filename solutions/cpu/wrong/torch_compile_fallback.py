# task: activation.relu
# expect: cheat_detected
# reason: line 17: uses `torch.compile`
"""Exploit: lets torch.compile (Inductor) write the kernel instead of writing one."""

import torch
import torch.nn as nn


def _relu(x):
    return x.clamp_min(0.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = torch.compile(_relu)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)
