"""Linear layer on (batch, seq, features), then GELU -> layer norm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "in_features": 33, "out_features": 40},
    {"batch": 3, "seq": 37, "in_features": 64, "out_features": 100},
    {"batch": 1, "seq": 100, "in_features": 129, "out_features": 257},
]
# in_features=64 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.40 fp32 / 0.19 bf16 on an H200
BENCH_SHAPE = {"batch": 128, "seq": 512, "in_features": 64, "out_features": 16384}
CPU_BENCH_SHAPE = {"batch": 1, "seq": 64, "in_features": 1024, "out_features": 1024}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
# bf16: the normalization/reduction amplifies one-ulp differences of the bf16 intermediate, so 0.03.
TOLERANCE = {"float32": (0.001, 0.001), "bfloat16": (0.03, 0.03)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = F.gelu(x)
        x = self.norm(x)
        return x


def get_init_inputs(shape):
    return [shape["in_features"], shape["out_features"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["in_features"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    b, s, i, o = shape["batch"], shape["seq"], shape["in_features"], shape["out_features"]
    y = b * s * o  # linear output elements
    return (
          2 * y * i  # matrix multiply (multiply-add = 2)
        + y  # bias add
        + y  # GELU
        + 7 * y  # layer norm: sum, square+sum, subtract+scale, affine
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    b, s, i, o = shape["batch"], shape["seq"], shape["in_features"], shape["out_features"]
    y = b * s * o  # linear output elements
    return itemsize * (
          b * s * i  # x (input)
        + i * o + o  # linear weight and bias
        + 2 * o  # layer norm weight and bias
        + y  # output
    )
