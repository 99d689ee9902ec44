"""Exclusive prefix sum along the last dimension: out[0] = 0, out[i] = x[0] + ... + x[i-1]."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "length": 37},
    {"batch": 16, "length": 1000},
    {"batch": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 65536, "length": 8192}
CPU_BENCH_SHAPE = {"batch": 256, "length": 8192}
# Prefix sums over up to 4099 terms: summation order changes the result by ~sqrt(n) ulps of the total.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(torch.cumsum(x[..., :-1], dim=-1), (1, 0))


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["length"], mean=0.05)]


def flops(shape):
    # one add per element except the last of each row
    return shape["batch"] * (shape["length"] - 1)


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["length"] * itemsize
