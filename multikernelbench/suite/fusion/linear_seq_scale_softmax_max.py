"""Linear layer on (batch, seq, features), then multiplication by 4.0 -> softmax over the last dim -> a max over the features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

SCALE = 4.0

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "in_features": 33, "out_features": 40},
    {"batch": 3, "seq": 37, "in_features": 64, "out_features": 100},
    {"batch": 1, "seq": 100, "in_features": 129, "out_features": 257},
]
BENCH_SHAPE = {"batch": 16, "seq": 512, "in_features": 2048, "out_features": 2048}
CPU_BENCH_SHAPE = {"batch": 1, "seq": 64, "in_features": 1024, "out_features": 1024}
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
        x = F.softmax(x, dim=-1)
        x = x.amax(dim=-1, keepdim=True)
        return x


def get_init_inputs(shape):
    return [shape["in_features"], shape["out_features"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["in_features"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; softmax = 5 per element (max, subtract, exp, sum, divide); per-row / per-channel
# scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    b, s, i, o = shape["batch"], shape["seq"], shape["in_features"], shape["out_features"]
    y = b * s * o  # linear output elements
    return (
          2 * y * i  # matrix multiply (multiply-add = 2)
        + y  # bias add
        + y  # scale
        + 5 * y  # softmax: max, subtract, exp, sum, divide
        + y  # max reduction: one op per input element
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    b, s, i, o = shape["batch"], shape["seq"], shape["in_features"], shape["out_features"]
    r = b * s  # elements after the reduction
    return itemsize * (
          b * s * i  # x (input)
        + i * o + o  # linear weight and bias
        + r  # output
    )
