"""Squared differences of every pair: (a[B, 1, D] - b[1, M, D])**2 as a [B, M, D] tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"b": 3, "m": 5, "d": 37},
    {"b": 8, "m": 16, "d": 1000},
    {"b": 2, "m": 3, "d": 4099},
]
BENCH_SHAPE = {"b": 512, "m": 512, "d": 4096}
CPU_BENCH_SHAPE = {"b": 32, "m": 64, "d": 1024}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a - b) ** 2


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["b"], 1, shape["d"]), randn(gen, 1, shape["m"], shape["d"], mean=0.5)]


def flops(shape):
    # subtract and square per output element
    return 2 * shape["b"] * shape["m"] * shape["d"]


def bytes_moved(shape, itemsize):
    b, m, d = shape["b"], shape["m"], shape["d"]
    return (b * d + m * d + b * m * d) * itemsize
