"""Clamp a [B, N] tensor between a per-column lower bound [1, N] and a per-row upper bound [B, 1]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import positive, randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=low, max=high)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    # low < 0 < high, so the bounds never cross and each element is clipped, or kept, unambiguously.
    return [randn(gen, b, n, std=1.5), -positive(gen, 1, n, low=0.2, high=2.0),
            positive(gen, b, 1, low=0.2, high=2.0)]


def flops(shape):
    # a max and a min per element
    return 2 * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    b, n = shape["batch"], shape["dim"]
    return (2 * b * n + n + b) * itemsize
