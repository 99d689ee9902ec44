"""Leaky ReLU with a configurable negative slope, applied elementwise to a 2-D tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "cols": 37}, {"rows": 16, "cols": 130}, {"rows": 5, "cols": 1001}]
BENCH_SHAPE = {"rows": 4096, "cols": 65536}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, self.negative_slope)


def get_init_inputs(shape):
    return [0.1]


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["cols"])]


def flops(shape):
    return shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return 2 * shape["rows"] * shape["cols"] * itemsize
