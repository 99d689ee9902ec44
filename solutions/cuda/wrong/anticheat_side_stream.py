# task: activation.relu
# expect: cheat_detected
# reason: creates a stream via `torch.cuda.Stream`
# gpu-only
"""Exploit: launches the work on a side stream and returns before it finishes, so a timer that only
syncs the current stream misses it."""

import torch
import torch.nn as nn

_side = torch.cuda.Stream()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        with torch.cuda.stream(_side):
            torch.clamp_min(x, 0.0, out=out)
        return out
