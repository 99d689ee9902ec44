"""2-D convolution (3x3), then GELU -> a learned per-channel scale -> residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3
PADDING = 1

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "in_channels": 3, "out_channels": 8, "height": 17, "width": 19},
    {"batch": 1, "in_channels": 16, "out_channels": 33, "height": 32, "width": 33},
    {"batch": 3, "in_channels": 5, "out_channels": 12, "height": 37, "width": 13},
]
BENCH_SHAPE = {"batch": 512, "in_channels": 256, "out_channels": 512, "height": 32, "width": 32}
CPU_BENCH_SHAPE = {"batch": 1, "in_channels": 32, "out_channels": 64, "height": 64, "width": 64}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 4), "in_channels": (1, 20), "out_channels": (1, 40), "height": (1, 40), "width": (1, 40)}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, KERNEL_SIZE, padding=PADDING)
        # Learned per-channel scale, drawn around 1 so it matters.
        self.scale = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.gelu(x)
        x = x * self.scale
        x = x + residual
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"]]


def get_inputs(shape, gen):
    return [
        randn(gen, shape["batch"], shape["in_channels"], shape["height"], shape["width"]),
        randn(gen, shape["batch"], shape["out_channels"], shape["height"], shape["width"]),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; per-row / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    n, ci, co, h = shape["batch"], shape["in_channels"], shape["out_channels"], shape["height"]
    w = shape["width"]
    ho = h + 2 * PADDING - KERNEL_SIZE + 1
    wo = w + 2 * PADDING - KERNEL_SIZE + 1
    y = n * co * ho * wo  # convolution output elements
    return (
          2 * y * ci * KERNEL_SIZE * KERNEL_SIZE  # convolution (multiply-add = 2)
        + y  # bias add
        + y  # GELU
        + y  # per-channel scale
        + y  # residual add
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, h = shape["batch"], shape["in_channels"], shape["out_channels"], shape["height"]
    w = shape["width"]
    ho = h + 2 * PADDING - KERNEL_SIZE + 1
    wo = w + 2 * PADDING - KERNEL_SIZE + 1
    y = n * co * ho * wo  # convolution output elements
    return itemsize * (
          n * ci * h * w  # x (input)
        + n * co * ho * wo  # residual (input)
        + co * ci * KERNEL_SIZE * KERNEL_SIZE + co  # convolution weight and bias
        + co  # learned scale
        + y  # output
    )
