"""Unbiased variance (Bessel-corrected) over the last dimension of a 2-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"rows": 3, "cols": 37},
    {"rows": 16, "cols": 1000},
    {"rows": 7, "cols": 4099},
]
BENCH_SHAPE = {"rows": 65536, "cols": 16384}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=-1, correction=1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # A non-zero mean punishes the cancellation-prone sum(x^2) - n*mean^2 shortcut a little.
    return [randn(gen, shape["rows"], shape["cols"], mean=2.0, std=1.5)]


def flops(shape):
    # per element: add (mean), subtract, multiply-add (4); per row: divide for the mean and by n-1
    return 4 * shape["rows"] * shape["cols"] + 2 * shape["rows"]


def bytes_moved(shape, itemsize):
    return (shape["rows"] * shape["cols"] + shape["rows"]) * itemsize
