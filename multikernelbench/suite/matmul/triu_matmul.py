"""Product of two upper-triangular matrices: torch.triu(A) @ torch.triu(B) (the result is upper triangular)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [{"n": 37}, {"n": 100}, {"n": 257}]
BENCH_SHAPE = {"n": 12288}
CPU_BENCH_SHAPE = {"n": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over up to n terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.triu(a) @ torch.triu(b)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n = shape["n"]
    return [uniform(gen, n, n, low=-1.0, high=1.0), uniform(gen, n, n, low=-1.0, high=1.0)]


def flops(shape):
    # Useful work only: C[i, j] for i <= j sums k = i..j, i.e. j - i + 1 multiply-adds;
    # sum over i <= j of (j - i + 1) = n (n + 1) (n + 2) / 6, times 2 flops.
    n = shape["n"]
    return n * (n + 1) * (n + 2) // 3


def bytes_moved(shape, itemsize):
    return 3 * shape["n"] ** 2 * itemsize  # A, B read whole; the full (n, n) output written
