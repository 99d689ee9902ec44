# task: activation.gelu_tanh
# expect: cheat_detected
# reason: line 14: uses `half` in a float32 task
# runtime-expect: incorrect
# runtime-reason: values outside atol
"""Exploit: computes an fp32 task in fp16 (faster, and often "close enough")."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.half()
        return (0.5 * h * (1 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))).float()
