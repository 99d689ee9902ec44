"""Batched A @ B^T (attention-score shaped): torch.bmm(q, k.transpose(1, 2)) for q (b, m, d), k (b, n, d)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"b": 3, "m": 17, "n": 33, "d": 9},
    {"b": 4, "m": 64, "n": 37, "d": 100},
    {"b": 2, "m": 129, "n": 257, "d": 64},
]
BENCH_SHAPE = {"b": 256, "m": 2048, "n": 2048, "d": 128}
CPU_BENCH_SHAPE = {"b": 16, "m": 256, "n": 256, "d": 64}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over d terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.bmm(q, k.transpose(1, 2))


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, m, n, d = shape["b"], shape["m"], shape["n"], shape["d"]
    return [uniform(gen, b, m, d, low=-1.0, high=1.0), uniform(gen, b, n, d, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["b"] * shape["m"] * shape["n"] * shape["d"]


def bytes_moved(shape, itemsize):
    b, m, n, d = shape["b"], shape["m"], shape["n"], shape["d"]
    return b * (m * d + n * d + m * n) * itemsize
