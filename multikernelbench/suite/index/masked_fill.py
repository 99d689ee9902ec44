"""masked_fill with a mask computed from a float tensor: x where m >= 0.3, else -1.5."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn, uniform

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 16384, "dim": 16384}
CPU_BENCH_SHAPE = {"batch": 512, "dim": 8192}


class Model(nn.Module):
    def __init__(self, threshold: float, value: float):
        super().__init__()
        self.threshold, self.value = threshold, value

    def forward(self, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return x.masked_fill(m < self.threshold, self.value)


def get_init_inputs(shape):
    return [0.3, -1.5]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"]), uniform(gen, shape["batch"], shape["dim"])]


def flops(shape):
    return shape["batch"] * shape["dim"]  # one comparison per element


def bytes_moved(shape, itemsize):
    return 3 * shape["batch"] * shape["dim"] * itemsize
