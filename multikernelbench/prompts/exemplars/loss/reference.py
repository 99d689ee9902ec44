"""Mean squared error between a prediction and a target, reduced to a scalar."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "cols": 37}, {"rows": 16, "cols": 130}, {"rows": 5, "cols": 1001}]
BENCH_SHAPE = {"rows": 8192, "cols": 32768}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}
# A mean over up to ~5000 terms: fp32 rounding depends on the summation order.
TOLERANCE = {"float32": (1e-4, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return torch.mean((pred - target) ** 2)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["cols"]), randn(gen, shape["rows"], shape["cols"])]


def flops(shape):
    return 3 * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return (2 * shape["rows"] * shape["cols"] + 1) * itemsize
