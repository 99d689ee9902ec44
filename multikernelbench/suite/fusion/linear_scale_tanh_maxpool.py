"""Linear layer, then multiplication by 3.0 -> tanh -> max pooling (window 4)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

SCALE = 3.0
POOL = 4

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "in_features": 37, "out_features": 17},
    {"batch": 16, "in_features": 256, "out_features": 1000},
    {"batch": 33, "in_features": 129, "out_features": 65},
]
# in_features=128 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.47 fp32 / 0.10 bf16 on an H200
BENCH_SHAPE = {"batch": 32768, "in_features": 128, "out_features": 32768}
CPU_BENCH_SHAPE = {"batch": 64, "in_features": 1024, "out_features": 1024}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = x * SCALE
        x = torch.tanh(x)
        x = F.max_pool1d(x, POOL)  # pools along the last (feature) dim
        return x


def get_init_inputs(shape):
    return [shape["in_features"], shape["out_features"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_features"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; pooling is one op per window element (+ one divide per output for averages); per-row
# / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    b, i, o = shape["batch"], shape["in_features"], shape["out_features"]
    y = b * o  # linear output elements
    o_pooled = o // POOL
    p = b * o_pooled  # pooled elements
    return (
          2 * y * i  # matrix multiply (multiply-add = 2)
        + y  # bias add
        + y  # scale
        + y  # tanh
        + p * POOL  # max pool: one comparison per window element
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    b, i, o = shape["batch"], shape["in_features"], shape["out_features"]
    o_pooled = o // POOL
    p = b * o_pooled  # pooled elements
    return itemsize * (
          b * i  # x (input)
        + i * o + o  # linear weight and bias
        + p  # output
    )
