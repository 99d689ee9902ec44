"""Batched matrix multiplication torch.bmm: (b, m, k) @ (b, k, n)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"b": 3, "m": 17, "k": 33, "n": 9},
    {"b": 4, "m": 64, "k": 100, "n": 37},
    {"b": 2, "m": 129, "k": 65, "n": 257},
]
BENCH_SHAPE = {"b": 64, "m": 2048, "k": 2048, "n": 2048}
CPU_BENCH_SHAPE = {"b": 16, "m": 256, "k": 256, "n": 256}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, m, k, n = shape["b"], shape["m"], shape["k"], shape["n"]
    return [uniform(gen, b, m, k, low=-1.0, high=1.0), uniform(gen, b, k, n, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["b"] * shape["m"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    b, m, k, n = shape["b"], shape["m"], shape["k"], shape["n"]
    return b * (m * k + k * n + m * n) * itemsize
