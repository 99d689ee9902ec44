"""Tensor.scatter along dim 1: overwrite k distinct columns per row of x with values from src."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import permutation, randint, randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37, "k": 11},
    {"batch": 16, "dim": 1000, "k": 1000},
    {"batch": 7, "dim": 4099, "k": 513},
]
BENCH_SHAPE = {"batch": 16384, "dim": 16384, "k": 8192}
CPU_BENCH_SHAPE = {"batch": 512, "dim": 4096, "k": 2048}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.scatter(1, index, src)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, d, k = shape["batch"], shape["dim"], shape["k"]
    # k distinct columns per row (the result is then deterministic): a random k-subset, rotated by a
    # random per-row offset, stays distinct modulo d.
    cols = permutation(gen, d)[:k].unsqueeze(0)
    index = (cols + randint(gen, 0, d, b, 1)) % d
    return [randn(gen, b, d), index, randn(gen, b, k, mean=1.0)]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    b = shape["batch"]
    # x read, output written, src read, int64 index read
    return 2 * b * shape["dim"] * itemsize + b * shape["k"] * (itemsize + 8)
