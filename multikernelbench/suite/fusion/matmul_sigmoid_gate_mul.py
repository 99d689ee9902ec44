"""Matrix product A @ B, then sigmoid -> product with a gate input."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 17, "k": 33, "n": 37},
    {"m": 64, "k": 1000, "n": 48},
    {"m": 129, "k": 100, "n": 257},
]
# k=128 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.49 fp32 / 0.31 bf16 on an H200
BENCH_SHAPE = {"m": 16384, "k": 128, "n": 32768}
CPU_BENCH_SHAPE = {"m": 128, "k": 512, "n": 1024}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(a, b)
        x = torch.sigmoid(x)
        x = x * gate
        return x


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [
        randn(gen, shape["m"], shape["k"]),
        randn(gen, shape["k"], shape["n"], std=1.0 / math.sqrt(shape["k"])),
        randn(gen, shape["m"], shape["n"]),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; per-row / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    m, k, n = shape["m"], shape["k"], shape["n"]
    y = m * n  # product elements
    return (
          2 * y * k  # matrix multiply (multiply-add = 2)
        + y  # sigmoid
        + y  # elementwise product
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    m, k, n = shape["m"], shape["k"], shape["n"]
    y = m * n  # product elements
    return itemsize * (
          m * k  # a (input)
        + k * n  # b (input)
        + m * n  # gate (input)
        + y  # output
    )
