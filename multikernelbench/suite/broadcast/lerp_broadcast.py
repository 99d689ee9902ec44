"""Linear interpolation lerp(a[B, N], b[1, N], w[B, 1]) with a per-row weight in [0, 1]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn, uniform

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

    def forward(self, a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.lerp(a, b, w)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    bs, n = shape["batch"], shape["dim"]
    return [randn(gen, bs, n), randn(gen, 1, n, mean=1.0), uniform(gen, bs, 1)]


def flops(shape):
    # a + w * (b - a): subtract, multiply, add
    return 3 * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    bs, n = shape["batch"], shape["dim"]
    return (2 * bs * n + n + bs) * itemsize
