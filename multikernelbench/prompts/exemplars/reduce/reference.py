"""Sum of each row of a 2-D tensor (reduction over the last dimension)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "cols": 37}, {"rows": 16, "cols": 130}, {"rows": 5, "cols": 1001}]
BENCH_SHAPE = {"rows": 8192, "cols": 32768}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}
# Sums of ~1000 terms of magnitude ~1: fp32 rounding depends on the summation order.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["cols"], mean=0.5)]


def flops(shape):
    return shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return (shape["rows"] * shape["cols"] + shape["rows"]) * itemsize
