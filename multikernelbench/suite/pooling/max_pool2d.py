"""2-D max pooling of an (N, C, H, W) tensor: kernel 3, stride 2, padding 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 128, "channels": 128, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 32, "height": 128, "width": 128}
KERNEL, STRIDE, PAD = 3, 2, 1


class Model(nn.Module):
    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel, stride, padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_init_inputs(shape):
    return [KERNEL, STRIDE, PAD]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def _out(n):
    return (n + 2 * PAD - KERNEL) // STRIDE + 1


def flops(shape):
    # KERNEL^2 - 1 comparisons per output (padded taps counted).
    outs = shape["batch"] * shape["channels"] * _out(shape["height"]) * _out(shape["width"])
    return outs * (KERNEL * KERNEL - 1)


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + _out(shape["height"]) * _out(shape["width"])) * itemsize
