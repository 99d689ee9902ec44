# task: activation.relu
# expect: runtime_error
# reason: out of memory
# gpu-only
"""Fault: asks for far more device memory than any GPU has."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty(1 << 44, dtype=torch.float32, device=x.device)  # 64 TiB
        return x + scratch[:1]
