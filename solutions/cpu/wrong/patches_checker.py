# task: activation.relu
# expect: cheat_detected
# reason: imports the harness
# runtime-expect: cheat_detected
# runtime-reason: multikernelbench.engine.checking.compare_outputs
"""Exploit: patches the checker and torch's comparisons to always pass, then returns garbage."""

import torch
import torch.nn as nn

import multikernelbench.engine.checking as checking

checking.compare_outputs = lambda *a, **k: None
torch.allclose = lambda *a, **k: True


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
