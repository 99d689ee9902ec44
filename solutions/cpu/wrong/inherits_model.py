# task: activation.relu
# expect: cheat_detected
# reason: ModelNew inherits from the reference `Model`
# runtime-expect: cheat_detected
# runtime-reason: aten::relu
"""Exploit: re-declares the reference and inherits its forward."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


class ModelNew(Model):
    pass
