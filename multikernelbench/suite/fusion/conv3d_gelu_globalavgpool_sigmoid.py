"""3-D convolution (3x3x3), then GELU -> a mean over the spatial dims -> sigmoid."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3

TEST_SHAPES = [
    {"batch": 1, "in_channels": 3, "out_channels": 8, "depth": 7, "height": 9, "width": 10},
    {"batch": 2, "in_channels": 4, "out_channels": 6, "depth": 5, "height": 17, "width": 11},
    {"batch": 1, "in_channels": 8, "out_channels": 12, "depth": 6, "height": 13, "width": 13},
]
BENCH_SHAPE = {"batch": 16, "in_channels": 32, "out_channels": 64, "depth": 32, "height": 64, "width": 64}
CPU_BENCH_SHAPE = {"batch": 2, "in_channels": 8, "out_channels": 16, "depth": 16, "height": 32, "width": 32}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, KERNEL_SIZE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.gelu(x)
        x = x.mean(dim=(2, 3, 4), keepdim=True)
        x = torch.sigmoid(x)
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["depth"], shape["height"], shape["width"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; per-row / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    do = d - KERNEL_SIZE + 1
    ho = h - KERNEL_SIZE + 1
    wo = w - KERNEL_SIZE + 1
    y = n * co * do * ho * wo  # convolution output elements
    r = n * co  # elements after the reduction
    return (
          2 * y * ci * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE  # convolution (multiply-add = 2)
        + y  # bias add
        + y  # GELU
        + y + r  # mean: one add per input element, one divide per output
        + r  # sigmoid
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    r = n * co  # elements after the reduction
    return itemsize * (
          n * ci * d * h * w  # x (input)
        + co * ci * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE + co  # convolution weight and bias
        + r  # output
    )
