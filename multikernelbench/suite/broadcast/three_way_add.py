"""Sum of three tensors broadcast together: [B, M, N] + [B, 1, N] + [1, M, 1]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"b": 3, "m": 5, "n": 37},
    {"b": 4, "m": 16, "n": 1000},
    {"b": 2, "m": 3, "n": 4099},
]
BENCH_SHAPE = {"b": 256, "m": 512, "n": 4096}
CPU_BENCH_SHAPE = {"b": 32, "m": 64, "n": 1024}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, row: torch.Tensor, col: torch.Tensor) -> torch.Tensor:
        return x + row + col


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, m, n = shape["b"], shape["m"], shape["n"]
    return [randn(gen, b, m, n), randn(gen, b, 1, n), randn(gen, 1, m, 1)]


def flops(shape):
    return 2 * shape["b"] * shape["m"] * shape["n"]


def bytes_moved(shape, itemsize):
    b, m, n = shape["b"], shape["m"], shape["n"]
    return (2 * b * m * n + b * n + m) * itemsize
