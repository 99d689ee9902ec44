"""1-D convolution (kernel 3), then multiplication by 2.0 -> softmax over the channels -> max pooling (window 4)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3
SCALE = 2.0
POOL = 4

TEST_SHAPES = [
    {"batch": 2, "in_channels": 3, "out_channels": 8, "length": 37},
    {"batch": 4, "in_channels": 16, "out_channels": 33, "length": 1000},
    {"batch": 3, "in_channels": 17, "out_channels": 12, "length": 129},
]
BENCH_SHAPE = {"batch": 64, "in_channels": 256, "out_channels": 256, "length": 4096}
CPU_BENCH_SHAPE = {"batch": 4, "in_channels": 64, "out_channels": 64, "length": 2048}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, KERNEL_SIZE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * SCALE
        x = F.softmax(x, dim=1)
        x = F.max_pool1d(x, POOL)
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["length"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; softmax = 5 per element (max, subtract, exp, sum, divide); pooling is one op per
# window element (+ one divide per output for averages); per-row / per-channel scalar work (e.g. a sqrt of a
# variance) is not counted.
def flops(shape):
    n, ci, co, l = shape["batch"], shape["in_channels"], shape["out_channels"], shape["length"]
    lo = l - KERNEL_SIZE + 1
    y = n * co * lo  # convolution output elements
    lp = lo // POOL
    p = n * co * lp  # pooled elements
    return (
          2 * y * ci * KERNEL_SIZE  # convolution (multiply-add = 2)
        + y  # bias add
        + y  # scale
        + 5 * y  # softmax: max, subtract, exp, sum, divide
        + p * POOL  # max pool: one comparison per window element
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, l = shape["batch"], shape["in_channels"], shape["out_channels"], shape["length"]
    lo = l - KERNEL_SIZE + 1
    lp = lo // POOL
    p = n * co * lp  # pooled elements
    return itemsize * (
          n * ci * l  # x (input)
        + co * ci * KERNEL_SIZE + co  # convolution weight and bias
        + p  # output
    )
