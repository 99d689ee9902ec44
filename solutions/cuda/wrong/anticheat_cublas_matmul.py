# task: matmul.square
# expect: cheat_detected
# reason: forward path calls library op `torch.matmul`
# runtime-expect: cheat_detected
# runtime-reason: aten::mm
# gpu-only
"""Exploit: hands the whole task to cuBLAS."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)
