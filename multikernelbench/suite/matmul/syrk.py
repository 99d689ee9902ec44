"""Symmetric rank-k product A @ A.T for A of shape (n, k) (the result is symmetric)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"n": 37, "k": 53},
    {"n": 128, "k": 100},
    {"n": 257, "k": 65},
]
BENCH_SHAPE = {"n": 8192, "k": 8192}
CPU_BENCH_SHAPE = {"n": 512, "k": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return a @ a.T


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [uniform(gen, shape["n"], shape["k"], low=-1.0, high=1.0)]


def flops(shape):
    # Counted as the full (n, n) product, 2 n^2 k; a kernel exploiting symmetry does about half.
    return 2 * shape["n"] ** 2 * shape["k"]


def bytes_moved(shape, itemsize):
    n, k = shape["n"], shape["k"]
    return (n * k + n * n) * itemsize
