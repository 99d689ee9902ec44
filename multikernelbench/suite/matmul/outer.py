"""Outer product torch.outer(u, v) of two vectors (output-bandwidth bound)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 37, "n": 4099},
    {"m": 1000, "n": 33},
    {"m": 257, "n": 129},
]
BENCH_SHAPE = {"m": 32768, "n": 32768}
CPU_BENCH_SHAPE = {"m": 2048, "n": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.outer(u, v)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [uniform(gen, shape["m"], low=-2.0, high=2.0), uniform(gen, shape["n"], low=-1.0, high=1.0)]


def flops(shape):
    return shape["m"] * shape["n"]  # one multiply per output element


def bytes_moved(shape, itemsize):
    m, n = shape["m"], shape["n"]
    return (m + n + m * n) * itemsize
