"""Tanh of a fixed-size input: no module-level size, so nothing can be scaled."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 3.0


def get_inputs():
    return [torch.randn(12, 40) * 2.0]


def get_init_inputs():
    return []
