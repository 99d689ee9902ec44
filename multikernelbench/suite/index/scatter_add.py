"""Tensor.scatter_add along dim 1: accumulate src into random (possibly repeated) columns of x."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37, "k": 100},
    {"batch": 16, "dim": 1000, "k": 1000},
    {"batch": 7, "dim": 4099, "k": 513},
]
BENCH_SHAPE = {"batch": 16384, "dim": 8192, "k": 16384}
CPU_BENCH_SHAPE = {"batch": 512, "dim": 2048, "k": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.scatter_add(1, index, src)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, d, k = shape["batch"], shape["dim"], shape["k"]
    return [randn(gen, b, d), randint(gen, 0, d, b, k), randn(gen, b, k, mean=0.5)]


def flops(shape):
    return shape["batch"] * shape["k"]  # one add per src element


def bytes_moved(shape, itemsize):
    b = shape["batch"]
    return 2 * b * shape["dim"] * itemsize + b * shape["k"] * (itemsize + 8)
