"""Add a learned per-column bias vector [N] to every row of a [B, N] tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.bias


def get_init_inputs(shape):
    return [shape["dim"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"])]


def flops(shape):
    return shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return (2 * shape["batch"] * shape["dim"] + shape["dim"]) * itemsize
