"""Cumulative product along the last dimension of a 2-D tensor with factors near 1."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

TEST_SHAPES = [
    {"batch": 3, "length": 37},
    {"batch": 16, "length": 1000},
    {"batch": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 65536, "length": 8192}
CPU_BENCH_SHAPE = {"batch": 256, "length": 8192}
# Running products of up to 4099 factors: relative rounding error grows with the number of factors.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # Factors in [0.97, 1.03]: the log of a running product drifts by ~0.017*sqrt(i), so the products stay
    # finite over 8192 steps (within ~e^+-8) while changing visibly along the row.
    return [uniform(gen, shape["batch"], shape["length"], low=0.97, high=1.03)]


def flops(shape):
    # one multiply per element
    return shape["batch"] * shape["length"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["length"] * itemsize
