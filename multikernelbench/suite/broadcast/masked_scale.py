"""Float mask from a broadcast comparison, (x > t[B, 1]), times x times a per-column scale v[1, N]."""

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

    def forward(self, x: torch.Tensor, t: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        mask = (x > t).to(x.dtype)
        return mask * x * v


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    return [randn(gen, b, n), randn(gen, b, 1, std=0.5), randn(gen, 1, n, mean=1.0)]


def flops(shape):
    # compare, two multiplies per element
    return 3 * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    b, n = shape["batch"], shape["dim"]
    return (2 * b * n + b + n) * itemsize
