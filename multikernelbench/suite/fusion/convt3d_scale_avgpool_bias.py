"""3-D transposed convolution (3x3x3, stride 2), then multiplication by 2.0 -> avg pooling (window 2) -> a learned per-channel bias."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1
SCALE = 2.0
POOL = 2

TEST_SHAPES = [
    {"batch": 1, "in_channels": 4, "out_channels": 3, "depth": 4, "height": 5, "width": 6},
    {"batch": 2, "in_channels": 8, "out_channels": 4, "depth": 3, "height": 7, "width": 5},
    {"batch": 1, "in_channels": 6, "out_channels": 8, "depth": 5, "height": 6, "width": 6},
]
BENCH_SHAPE = {"batch": 64, "in_channels": 64, "out_channels": 32, "depth": 16, "height": 32, "width": 32}
CPU_BENCH_SHAPE = {"batch": 4, "in_channels": 16, "out_channels": 8, "depth": 8, "height": 16, "width": 16}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels, out_channels, KERNEL_SIZE, stride=STRIDE, padding=PADDING, output_padding=OUTPUT_PADDING,
        )
        self.shift = nn.Parameter(torch.randn(out_channels, 1, 1, 1) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * SCALE
        x = F.avg_pool3d(x, POOL)
        x = x + self.shift
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["depth"], shape["height"], shape["width"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; pooling is one op per window element (+ one divide per output for averages); per-row
# / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    do = (d - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    ho = (h - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    wo = (w - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    y = n * co * do * ho * wo  # transposed convolution output elements
    x_elems = n * ci * d * h * w
    dp, hp, wp = do // POOL, ho // POOL, wo // POOL
    p = n * co * dp * hp * wp  # pooled elements
    return (
          2 * x_elems * co * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE  # transposed conv: input elements x taps x out channels (multiply-add = 2)
        + y  # bias add
        + y  # scale
        + p * POOL * POOL * POOL + p  # average pool: one add per window element, one divide per output
        + p  # per-channel shift
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    do = (d - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    ho = (h - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    wo = (w - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE + OUTPUT_PADDING
    dp, hp, wp = do // POOL, ho // POOL, wo // POOL
    p = n * co * dp * hp * wp  # pooled elements
    return itemsize * (
          n * ci * d * h * w  # x (input)
        + ci * co * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE + co  # convolution weight and bias
        + co  # learned shift
        + p  # output
    )
