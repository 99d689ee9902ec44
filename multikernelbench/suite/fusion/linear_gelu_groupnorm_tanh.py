"""Linear layer, then GELU -> group norm -> tanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "in_features": 37, "out_features": 18, "groups": 3},
    {"batch": 16, "in_features": 256, "out_features": 1000, "groups": 8},
    {"batch": 33, "in_features": 129, "out_features": 96, "groups": 4},
]
BENCH_SHAPE = {"batch": 4096, "in_features": 4096, "out_features": 4096, "groups": 8}
CPU_BENCH_SHAPE = {"batch": 64, "in_features": 1024, "out_features": 1024, "groups": 4}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = F.gelu(x)
        x = self.gn(x)
        x = torch.tanh(x)
        return x


def get_init_inputs(shape):
    return [shape["in_features"], shape["out_features"], shape["groups"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_features"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    b, i, o = shape["batch"], shape["in_features"], shape["out_features"]
    y = b * o  # linear output elements
    return (
          2 * y * i  # matrix multiply (multiply-add = 2)
        + y  # bias add
        + y  # GELU
        + 7 * y  # group norm: sum, square+sum, subtract+scale, affine
        + y  # tanh
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    b, i, o = shape["batch"], shape["in_features"], shape["out_features"]
    y = b * o  # linear output elements
    return itemsize * (
          b * i  # x (input)
        + i * o + o  # linear weight and bias
        + 2 * o  # group norm weight and bias
        + y  # output
    )
