"""2-D transposed convolution (4x4, stride 2), then GELU -> group norm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "in_channels": 8, "out_channels": 3, "height": 9, "width": 11, "groups": 3},
    {"batch": 1, "in_channels": 16, "out_channels": 12, "height": 17, "width": 16, "groups": 4},
    {"batch": 3, "in_channels": 5, "out_channels": 8, "height": 13, "width": 7, "groups": 2},
]
BENCH_SHAPE = {"batch": 512, "in_channels": 256, "out_channels": 256, "height": 32, "width": 32, "groups": 8}
CPU_BENCH_SHAPE = {"batch": 2, "in_channels": 32, "out_channels": 16, "height": 64, "width": 64, "groups": 4}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
# bf16: the normalization/reduction amplifies one-ulp differences of the bf16 intermediate, so 0.03.
TOLERANCE = {"float32": (0.001, 0.001), "bfloat16": (0.03, 0.03)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_groups: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels, out_channels, KERNEL_SIZE, stride=STRIDE, padding=PADDING,
        )
        self.gn = nn.GroupNorm(num_groups, out_channels)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.gelu(x)
        x = self.gn(x)
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"], shape["groups"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["height"], shape["width"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); per-row / per-channel scalar work (e.g. a sqrt of a variance) is
# not counted.
def flops(shape):
    n, ci, co, h = shape["batch"], shape["in_channels"], shape["out_channels"], shape["height"]
    w = shape["width"]
    ho = (h - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE
    wo = (w - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE
    y = n * co * ho * wo  # transposed convolution output elements
    x_elems = n * ci * h * w
    return (
          2 * x_elems * co * KERNEL_SIZE * KERNEL_SIZE  # transposed conv: input elements x taps x out channels (multiply-add = 2)
        + y  # bias add
        + y  # GELU
        + 7 * y  # group norm: sum, square+sum, subtract+scale, affine
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    n, ci, co, h = shape["batch"], shape["in_channels"], shape["out_channels"], shape["height"]
    w = shape["width"]
    ho = (h - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE
    wo = (w - 1) * STRIDE - 2 * PADDING + KERNEL_SIZE
    y = n * co * ho * wo  # transposed convolution output elements
    return itemsize * (
          n * ci * h * w  # x (input)
        + ci * co * KERNEL_SIZE * KERNEL_SIZE + co  # convolution weight and bias
        + 2 * co  # group norm weight and bias
        + y  # output
    )
