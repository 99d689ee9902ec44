"""Tensor.index_copy along dim 0: overwrite k distinct random rows of x with the rows of src."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import permutation, randn

TEST_SHAPES = [
    {"rows": 37, "dim": 17, "k": 20},
    {"rows": 1000, "dim": 64, "k": 333},
    {"rows": 129, "dim": 4099, "k": 64},
]
BENCH_SHAPE = {"rows": 262144, "dim": 1024, "k": 131072}
CPU_BENCH_SHAPE = {"rows": 8192, "dim": 512, "k": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.index_copy(0, index, src)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    r, d, k = shape["rows"], shape["dim"], shape["k"]
    # distinct target rows, so the result does not depend on write order
    return [randn(gen, r, d), permutation(gen, r)[:k], randn(gen, k, d, mean=1.0)]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    return (2 * shape["rows"] + shape["k"]) * shape["dim"] * itemsize + shape["k"] * 8
