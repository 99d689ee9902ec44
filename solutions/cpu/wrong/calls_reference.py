# task: activation.relu
# expect: cheat_detected
# reason: reference_op
# runtime-expect: cheat_detected
# runtime-reason: library compute op(s) aten::relu
"""Exploit: no kernel at all, forward calls the reference's own op."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
