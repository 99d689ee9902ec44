"""Inclusive cumulative sum along the last dimension of a 2-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "cols": 37}, {"rows": 16, "cols": 130}, {"rows": 5, "cols": 1001}]
BENCH_SHAPE = {"rows": 32768, "cols": 8192}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}
# Prefix sums of up to ~1000 terms: fp32 rounding depends on the scan order.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["cols"])]


def flops(shape):
    return shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return 2 * shape["rows"] * shape["cols"] * itemsize
