"""Lower-triangular times dense: torch.tril(A) @ B for square (n, n) matrices."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [{"n": 37}, {"n": 100}, {"n": 257}]
BENCH_SHAPE = {"n": 10240}
CPU_BENCH_SHAPE = {"n": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over up to n terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(a) @ b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n = shape["n"]
    return [uniform(gen, n, n, low=-1.0, high=1.0), uniform(gen, n, n, low=-1.0, high=1.0)]


def flops(shape):
    # Useful work only: row i of tril(A) has i + 1 nonzeros, so each of its n outputs takes i + 1
    # multiply-adds: 2 * n * sum_{i<n} (i + 1) = n^2 (n + 1).  (The eager reference does 2 n^3.)
    n = shape["n"]
    return n * n * (n + 1)


def bytes_moved(shape, itemsize):
    # A is read whole (the kernel cannot know where the zeros are without reading it or being told).
    return 3 * shape["n"] ** 2 * itemsize
