"""where(x > per-column threshold [1, N], x, per-row fill value [B, 1]) on a [B, N] tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

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

    def forward(self, x: torch.Tensor, threshold: torch.Tensor, fill: torch.Tensor) -> torch.Tensor:
        return torch.where(x > threshold, x, fill)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    return [randn(gen, b, n), randn(gen, 1, n, std=0.5), randn(gen, b, 1, mean=-1.0)]


def flops(shape):
    # one compare/select per element
    return shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    b, n = shape["batch"], shape["dim"]
    return (2 * b * n + n + b) * itemsize
