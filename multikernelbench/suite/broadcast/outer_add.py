"""Outer sum: a column vector [M, 1] plus a row vector [1, N] gives an [M, N] matrix."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"m": 3, "n": 37},
    {"m": 100, "n": 1000},
    {"m": 7, "n": 4099},
]
BENCH_SHAPE = {"m": 32768, "n": 32768}
CPU_BENCH_SHAPE = {"m": 2048, "n": 2048}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["m"], 1), randn(gen, 1, shape["n"])]


def flops(shape):
    return shape["m"] * shape["n"]


def bytes_moved(shape, itemsize):
    # inputs are tiny; the [M, N] output dominates
    return (shape["m"] + shape["n"] + shape["m"] * shape["n"]) * itemsize
