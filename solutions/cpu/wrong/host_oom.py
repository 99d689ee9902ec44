# task: activation.relu
# expect: runtime_error
# reason: can't allocate memory
"""Fault: allocates far more host memory than the worker's address-space limit."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty(1 << 40, dtype=torch.float32)  # 4 TiB
        return torch.clamp_min(x, 0.0) + scratch[:1] * 0
