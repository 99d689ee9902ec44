"""Running log-sum-exp (torch.logcumsumexp) along the last dimension of a 2-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "length": 37},
    {"batch": 16, "length": 1000},
    {"batch": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 65536, "length": 8192}
CPU_BENCH_SHAPE = {"batch": 256, "length": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logcumsumexp(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["length"], std=2.0)]


def flops(shape):
    # per element, combining log-sum-exp state (m, s) with x: max-compare, subtract, exp, add, log, add
    # (transcendentals count 1)
    return 6 * shape["batch"] * shape["length"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["length"] * itemsize
