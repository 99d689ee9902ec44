"""Adds a per-column bias vector to every row of a 2-D tensor (broadcast over rows)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "cols": 37}, {"rows": 16, "cols": 130}, {"rows": 5, "cols": 1001}]
BENCH_SHAPE = {"rows": 4096, "cols": 65536}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return x + bias


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["cols"]), randn(gen, shape["cols"])]


def flops(shape):
    return shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return (2 * shape["rows"] * shape["cols"] + shape["cols"]) * itemsize
