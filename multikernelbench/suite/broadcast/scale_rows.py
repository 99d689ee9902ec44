"""Scale each row of a [B, N] tensor by its own factor from a [B, 1] column vector."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * scale


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"]), randn(gen, shape["batch"], 1, mean=1.0)]


def flops(shape):
    return shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return (2 * shape["batch"] * shape["dim"] + shape["batch"]) * itemsize
