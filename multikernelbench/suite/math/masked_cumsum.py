"""Prefix sum along the last dimension counting only elements where a boolean mask is set."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn, uniform

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

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(torch.where(mask, x, torch.zeros_like(x)), dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["length"]
    return [randn(gen, b, n, mean=0.1), uniform(gen, b, n) < 0.6]


def flops(shape):
    # select + add per element
    return 2 * shape["batch"] * shape["length"]


def bytes_moved(shape, itemsize):
    # x in, out: itemsize each; the bool mask is 1 byte per element
    n = shape["batch"] * shape["length"]
    return 2 * n * itemsize + n
