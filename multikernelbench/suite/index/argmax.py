"""argmax over the last dimension of a 2-D tensor (int64 indices)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 32768, "dim": 32768}
CPU_BENCH_SHAPE = {"batch": 1024, "dim": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"])]


def flops(shape):
    return shape["batch"] * (shape["dim"] - 1)  # comparisons


def bytes_moved(shape, itemsize):
    return shape["batch"] * shape["dim"] * itemsize + shape["batch"] * 8
