"""Matrix product A @ B, then ELU -> avg pooling (window 4) -> a learned per-feature bias."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

POOL = 4

TEST_SHAPES = [
    {"m": 17, "k": 33, "n": 37},
    {"m": 64, "k": 1000, "n": 48},
    {"m": 129, "k": 100, "n": 257},
]
# k=64 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.39 (fp32) on an H200
BENCH_SHAPE = {"m": 16384, "k": 64, "n": 16384}
CPU_BENCH_SHAPE = {"m": 128, "k": 512, "n": 1024}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.shift = nn.Parameter(torch.randn(n // POOL,) * 0.5)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(a, b)
        x = F.elu(x)
        x = F.avg_pool1d(x, POOL)  # pools along the last (feature) dim
        x = x + self.shift
        return x


def get_init_inputs(shape):
    return [shape["n"]]


def get_inputs(shape, gen):
    return [
        randn(gen, shape["m"], shape["k"]),
        randn(gen, shape["k"], shape["n"], std=1.0 / math.sqrt(shape["k"])),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; pooling is one op per window element (+ one divide per output for averages); per-row
# / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    m, k, n = shape["m"], shape["k"], shape["n"]
    y = m * n  # product elements
    n_pooled = n // POOL
    p = m * n_pooled  # pooled elements
    return (
          2 * y * k  # matrix multiply (multiply-add = 2)
        + y  # ELU
        + p * POOL + p  # average pool: one add per window element, one divide per output
        + p  # per-channel shift
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    m, k, n = shape["m"], shape["k"], shape["n"]
    n_pooled = n // POOL
    p = m * n_pooled  # pooled elements
    return itemsize * (
          m * k  # a (input)
        + k * n  # b (input)
        + n_pooled  # learned shift
        + p  # output
    )
