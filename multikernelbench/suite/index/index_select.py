"""torch.index_select of random (repeating) rows of a 2-D table."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"rows": 37, "dim": 17, "k": 50},
    {"rows": 1000, "dim": 64, "k": 333},
    {"rows": 129, "dim": 4099, "k": 20},
]
BENCH_SHAPE = {"rows": 262144, "dim": 1024, "k": 1048576}
CPU_BENCH_SHAPE = {"rows": 8192, "dim": 512, "k": 16384}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["dim"]), randint(gen, 0, shape["rows"], shape["k"])]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    return (shape["rows"] + shape["k"]) * shape["dim"] * itemsize + shape["k"] * 8
