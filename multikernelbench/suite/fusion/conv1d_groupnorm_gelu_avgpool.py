"""1-D convolution (kernel 3), then group norm -> GELU -> avg pooling (window 4)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

KERNEL_SIZE = 3
POOL = 4

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "in_channels": 3, "out_channels": 8, "length": 37, "groups": 2},
    {"batch": 4, "in_channels": 16, "out_channels": 33, "length": 1000, "groups": 3},
    {"batch": 3, "in_channels": 17, "out_channels": 12, "length": 129, "groups": 4},
]
BENCH_SHAPE = {"batch": 256, "in_channels": 512, "out_channels": 512, "length": 4096, "groups": 8}
CPU_BENCH_SHAPE = {"batch": 4, "in_channels": 64, "out_channels": 64, "length": 2048, "groups": 4}
# The convolution sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
# bf16: the normalization/reduction amplifies one-ulp differences of the bf16 intermediate, so 0.03.
TOLERANCE = {"float32": (0.001, 0.001), "bfloat16": (0.03, 0.03)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_groups: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, KERNEL_SIZE)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        # Random affine parameters so the normalization is not a plain standardization.
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.gn(x)
        x = F.gelu(x)
        x = F.avg_pool1d(x, POOL)
        return x


def get_init_inputs(shape):
    return [shape["in_channels"], shape["out_channels"], shape["groups"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["in_channels"], shape["length"])]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; layer/group/instance norm = 7 per element (sum; square and sum; subtract mean and
# multiply by rstd; affine scale and shift); pooling is one op per window element (+ one divide per output for
# averages); per-row / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    n, ci, co, l = shape["batch"], shape["in_channels"], shape["out_channels"], shape["length"]
    lo = l - KERNEL_SIZE + 1
    y = n * co * lo  # convolution output elements
    lp = lo // POOL
    p = n * co * lp  # pooled elements
    return (
          2 * y * ci * KERNEL_SIZE  # convolution (multiply-add = 2)
        + y  # bias add
        + 7 * y  # group norm: sum, square+sum, subtract+scale, affine
        + y  # GELU
        + p * POOL + p  # average pool: one add per window element, one divide per output
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
        + 2 * co  # group norm weight and bias
        + p  # output
    )
