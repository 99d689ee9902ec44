"""Square matrix multiplication C = A @ B with A, B of shape (n, n)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [{"n": 37}, {"n": 128}, {"n": 257}]
BENCH_SHAPE = {"n": 8192}
CPU_BENCH_SHAPE = {"n": 512}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"n": (1, 300)}
# fp32 sums of n products: rounding grows with the reduction length.
TOLERANCE = {"float32": (1e-3, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n = shape["n"]
    return [uniform(gen, n, n, low=-1.0, high=1.0), uniform(gen, n, n, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["n"] ** 3


def bytes_moved(shape, itemsize):
    return 3 * shape["n"] ** 2 * itemsize
