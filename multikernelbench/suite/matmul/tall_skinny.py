"""Tall-skinny matrix multiplication: (m, k) @ (k, n) with m far larger than k and n."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 4099, "k": 16, "n": 8},
    {"m": 1000, "k": 37, "n": 64},
    {"m": 2053, "k": 64, "n": 33},
]
BENCH_SHAPE = {"m": 524288, "k": 1024, "n": 1024}
CPU_BENCH_SHAPE = {"m": 16384, "k": 128, "n": 128}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return [uniform(gen, m, k, low=-1.0, high=1.0), uniform(gen, k, n, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["m"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return (m * k + k * n + m * n) * itemsize
