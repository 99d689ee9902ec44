# task: activation.relu
# expect: crash
# reason: worker exited with code 3 before replying
"""Fault: kills its own process without unwinding."""

import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os._exit(3)
