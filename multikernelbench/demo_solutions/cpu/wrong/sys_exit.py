# task: activation.relu
# expect: runtime_error
# reason: candidate called sys.exit(0)
"""Fault: exits the interpreter politely in the middle of a call."""

import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        sys.exit(0)
