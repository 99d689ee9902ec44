"""argmin over the middle dimension of a 3-D (batch, reduce, inner) tensor (int64 indices)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "reduce": 33, "inner": 17},
    {"batch": 5, "reduce": 128, "inner": 100},
    {"batch": 3, "reduce": 1025, "inner": 7},
]
BENCH_SHAPE = {"batch": 128, "reduce": 4096, "inner": 2048}
CPU_BENCH_SHAPE = {"batch": 8, "reduce": 512, "inner": 1024}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["reduce"], shape["inner"])]


def flops(shape):
    return shape["batch"] * shape["inner"] * (shape["reduce"] - 1)  # comparisons


def bytes_moved(shape, itemsize):
    bi = shape["batch"] * shape["inner"]
    return bi * shape["reduce"] * itemsize + bi * 8
