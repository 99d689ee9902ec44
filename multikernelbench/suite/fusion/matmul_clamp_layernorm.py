"""Matrix product A @ B, then clamping to [-1.0, 1.0] -> layer norm."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

CLAMP_MIN = -1.0
CLAMP_MAX = 1.0

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 17, "k": 33, "n": 37},
    {"m": 64, "k": 1000, "n": 48},
    {"m": 129, "k": 100, "n": 257},
]
# k=64 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.39 fp32 / 0.19 bf16 on an H200
BENCH_SHAPE = {"m": 32768, "k": 64, "n": 32768}
CPU_BENCH_SHAPE = {"m": 128, "k": 512, "n": 1024}
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
        x = torch.matmul(a, b)
        x = torch.clamp(x, min=CLAMP_MIN, max=CLAMP_MAX)
        x = self.norm(x)
        return x


def get_init_inputs(shape):
    return [shape["n"]]


def get_inputs(shape, gen):
    return [
        randn(gen, shape["m"], shape["k"]),
        randn(gen, shape["k"], shape["n"], std=1.0 / math.sqrt(shape["k"])),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    m, k, n = shape["m"], shape["k"], shape["n"]
    y = m * n  # product elements
    return (
          2 * y * k  # matrix multiply (multiply-add = 2)
        + y  # clamp
        + 7 * y  # layer norm: sum, square+sum, subtract+scale, affine
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    m, k, n = shape["m"], shape["k"], shape["n"]
    y = m * n  # product elements
    return itemsize * (
          m * k  # a (input)
        + k * n  # b (input)
        + 2 * n  # layer norm weight and bias
        + y  # output
    )
