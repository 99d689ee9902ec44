"""Diagonal times dense: torch.diag(d) @ B, i.e. scale row i of B by d[i]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"n": 37, "m": 33},
    {"n": 100, "m": 1000},
    {"n": 257, "m": 65},
]
BENCH_SHAPE = {"n": 4096, "m": 131072}
CPU_BENCH_SHAPE = {"n": 128, "m": 32768}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, d: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.diag(d) @ b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n, m = shape["n"], shape["m"]
    return [uniform(gen, n, low=-2.0, high=2.0), uniform(gen, n, m, low=-1.0, high=1.0)]


def flops(shape):
    # Useful work: one multiply per output element (the eager reference does a dense 2 n^2 m matmul).
    return shape["n"] * shape["m"]


def bytes_moved(shape, itemsize):
    n, m = shape["n"], shape["m"]
    return (n + 2 * n * m) * itemsize
