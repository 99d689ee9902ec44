"""torch.gather along dim 1 of a 2-D tensor with random (repeating) column indices."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37, "k": 11},
    {"batch": 16, "dim": 1000, "k": 1000},
    {"batch": 7, "dim": 4099, "k": 513},
]
BENCH_SHAPE = {"batch": 16384, "dim": 16384, "k": 16384}
CPU_BENCH_SHAPE = {"batch": 512, "dim": 4096, "k": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"]), randint(gen, 0, shape["dim"], shape["batch"], shape["k"])]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    b = shape["batch"]
    return b * shape["dim"] * itemsize + b * shape["k"] * (8 + itemsize)
