"""Tensor.index_add along dim 0: add rows of src into random (repeating) rows of x."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"rows": 37, "dim": 17, "k": 100},
    {"rows": 1000, "dim": 64, "k": 333},
    {"rows": 129, "dim": 4099, "k": 20},
]
BENCH_SHAPE = {"rows": 131072, "dim": 1024, "k": 786432}
CPU_BENCH_SHAPE = {"rows": 4096, "dim": 512, "k": 16384}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.index_add(0, index, src)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    r, d, k = shape["rows"], shape["dim"], shape["k"]
    return [randn(gen, r, d), randint(gen, 0, r, k), randn(gen, k, d, mean=0.3)]


def flops(shape):
    return shape["k"] * shape["dim"]  # one add per src element


def bytes_moved(shape, itemsize):
    # x read, output written, src read, int64 index read
    return (2 * shape["rows"] + shape["k"]) * shape["dim"] * itemsize + shape["k"] * 8
