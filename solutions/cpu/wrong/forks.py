# task: activation.relu
# expect: cheat_detected
# reason: process creation (os.fork) during forward
"""Fault: forks a child that would outlive the call (and could keep working outside the clock)."""

import os
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        return torch.clamp_min(x, 0.0)
