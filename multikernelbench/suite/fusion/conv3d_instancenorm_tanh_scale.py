"""3-D convolution (3x3x3), then instance norm -> tanh -> multiplication by 2.0."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3
PADDING = 1
SCALE = 2.0

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 1, "in_channels": 3, "out_channels": 8, "depth": 7, "height": 9, "width": 10},
    {"batch": 2, "in_channels": 4, "out_channels": 6, "depth": 5, "height": 17, "width": 11},
    {"batch": 1, "in_channels": 8, "out_channels": 12, "depth": 6, "height": 13, "width": 13},
]
BENCH_SHAPE = {"batch": 128, "in_channels": 128, "out_channels": 128, "depth": 16, "height": 32, "width": 32}
CPU_BENCH_SHAPE = {"batch": 2, "in_channels": 8, "out_channels": 16, "depth": 16, "height": 32, "width": 32}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
# bf16: the normalization/reduction amplifies one-ulp differences of the bf16 intermediate, so 0.03.
TOLERANCE = {"float32": (0.001, 0.001), "bfloat16": (0.03, 0.03)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, KERNEL_SIZE, padding=PADDING)
        self.inorm = nn.InstanceNorm3d(out_channels, affine=True)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.inorm.weight.uniform_(0.5, 1.5)
            self.inorm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.inorm(x)
        x = torch.tanh(x)
        x = x * SCALE
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["depth"], shape["height"], shape["width"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    do = d + 2 * PADDING - KERNEL_SIZE + 1
    ho = h + 2 * PADDING - KERNEL_SIZE + 1
    wo = w + 2 * PADDING - KERNEL_SIZE + 1
    y = n * co * do * ho * wo  # convolution output elements
    return (
          2 * y * ci * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE  # convolution (multiply-add = 2)
        + y  # bias add
        + 7 * y  # instance norm: sum, square+sum, subtract+scale, affine
        + y  # tanh
        + y  # scale
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, d = shape["batch"], shape["in_channels"], shape["out_channels"], shape["depth"]
    h, w = shape["height"], shape["width"]
    do = d + 2 * PADDING - KERNEL_SIZE + 1
    ho = h + 2 * PADDING - KERNEL_SIZE + 1
    wo = w + 2 * PADDING - KERNEL_SIZE + 1
    y = n * co * do * ho * wo  # convolution output elements
    return itemsize * (
          n * ci * d * h * w  # x (input)
        + co * ci * KERNEL_SIZE * KERNEL_SIZE * KERNEL_SIZE + co  # convolution weight and bias
        + 2 * co  # instance norm weight and bias
        + y  # output
    )
