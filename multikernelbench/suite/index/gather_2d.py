"""Advanced indexing x[rows, cols]: pick k random (row, col) elements of a 2-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"rows": 37, "cols": 17, "k": 50},
    {"rows": 1000, "cols": 64, "k": 4099},
    {"rows": 129, "cols": 4099, "k": 1000},
]
BENCH_SHAPE = {"rows": 16384, "cols": 16384, "k": 134217728}
CPU_BENCH_SHAPE = {"rows": 1024, "cols": 1024, "k": 262144}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
        return x[rows, cols]


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    r, c, k = shape["rows"], shape["cols"], shape["k"]
    return [randn(gen, r, c), randint(gen, 0, r, k), randint(gen, 0, c, k)]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    return shape["rows"] * shape["cols"] * itemsize + shape["k"] * (2 * 8 + itemsize)
