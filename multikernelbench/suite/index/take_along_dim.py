"""torch.take_along_dim along dim 1 of a 3-D (batch, length, dim) tensor with random indices."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"batch": 2, "length": 37, "dim": 5, "k": 11},
    {"batch": 3, "length": 100, "dim": 64, "k": 100},
    {"batch": 1, "length": 1025, "dim": 33, "k": 257},
]
BENCH_SHAPE = {"batch": 64, "length": 4096, "dim": 1024, "k": 4096}
CPU_BENCH_SHAPE = {"batch": 4, "length": 1024, "dim": 512, "k": 256}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.take_along_dim(x, index, dim=1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, l, d, k = shape["batch"], shape["length"], shape["dim"], shape["k"]
    return [randn(gen, b, l, d), randint(gen, 0, l, b, k, d)]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    b, l, d, k = shape["batch"], shape["length"], shape["dim"], shape["k"]
    return b * l * d * itemsize + b * k * d * (8 + itemsize)
