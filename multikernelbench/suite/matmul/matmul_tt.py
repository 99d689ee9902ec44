"""Matrix multiplication with both operands transposed: A.T @ B.T, A stored as (k, m), B as (n, k)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 37, "k": 53, "n": 17},
    {"m": 128, "k": 100, "n": 64},
    {"m": 65, "k": 257, "n": 129},
]
BENCH_SHAPE = {"m": 8192, "k": 8192, "n": 8192}
CPU_BENCH_SHAPE = {"m": 512, "k": 512, "n": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.T @ b.T


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return [uniform(gen, k, m, low=-1.0, high=1.0), uniform(gen, n, k, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["m"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return (m * k + k * n + m * n) * itemsize
