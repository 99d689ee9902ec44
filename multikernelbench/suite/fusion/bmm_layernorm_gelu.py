"""Batched matrix product, then layer norm -> GELU."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "m": 17, "k": 33, "n": 37},
    {"batch": 4, "m": 64, "k": 100, "n": 48},
    {"batch": 3, "m": 33, "k": 257, "n": 129},
]
# k=64 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.39 fp32 / 0.20 bf16 on an H200
BENCH_SHAPE = {"batch": 128, "m": 2048, "k": 64, "n": 4096}
CPU_BENCH_SHAPE = {"batch": 2, "m": 256, "k": 256, "n": 512}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 6), "m": (1, 80), "k": (1, 300), "n": (2, 160)}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
# bf16: the normalization/reduction amplifies one-ulp differences of the bf16 intermediate, so 0.03.
TOLERANCE = {"float32": (0.001, 0.001), "bfloat16": (0.03, 0.03)}


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        x = torch.bmm(a, b)
        x = self.norm(x)
        x = F.gelu(x)
        return x


def get_init_inputs(shape):
    return [shape["n"]]


def get_inputs(shape, gen):
    return [
        randn(gen, shape["batch"], shape["m"], shape["k"]),
        randn(gen, shape["batch"], shape["k"], shape["n"], std=1.0 / math.sqrt(shape["k"])),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    bt, m, k, n = shape["batch"], shape["m"], shape["k"], shape["n"]
    y = bt * m * n  # product elements
    return (
          2 * y * k  # batched matrix multiply (multiply-add = 2)
        + 7 * y  # layer norm: sum, square+sum, subtract+scale, affine
        + y  # GELU
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    bt, m, k, n = shape["batch"], shape["m"], shape["k"], shape["n"]
    y = bt * m * n  # product elements
    return itemsize * (
          bt * m * k  # a (input)
        + bt * k * n  # b (input)
        + 2 * n  # layer norm weight and bias
        + y  # output
    )
