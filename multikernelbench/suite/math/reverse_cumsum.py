"""Reverse (suffix) cumulative sum along the last dimension: out[i] = sum of x[i:]."""

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
# Suffix sums over up to 4099 terms: summation order changes the result by ~sqrt(n) ulps of the total.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["length"], mean=-0.03)]


def flops(shape):
    # one add per element (the flips are data movement only)
    return shape["batch"] * shape["length"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["length"] * itemsize
