# task: activation.relu
# expect: cheat_detected
# reason: line 13: try/except swallows an error
# runtime-expect: cheat_detected
# runtime-reason: library compute op(s) aten::relu
"""Exploit: "uses" a kernel that never loads and silently falls back to PyTorch."""

import torch
import torch.nn as nn

try:
    import mkb_fast_relu_kernel as _kernel  # does not exist
except ImportError:
    _kernel = None


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _kernel is not None:
            return _kernel.relu(x)
        return torch.nn.functional.relu(x)
