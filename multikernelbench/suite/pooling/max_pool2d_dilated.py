"""2-D max pooling with dilation: kernel 3, stride 2, padding 1, dilation 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 128, "channels": 128, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 32, "height": 128, "width": 128}
KERNEL, STRIDE, PAD, DIL = 3, 2, 1, 2


class Model(nn.Module):
    def __init__(self, kernel: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.args = (kernel, stride, padding, dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s, p, d = self.args
        return F.max_pool2d(x, k, s, p, dilation=d)


def get_init_inputs(shape):
    return [KERNEL, STRIDE, PAD, DIL]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def _out(n):
    return (n + 2 * PAD - DIL * (KERNEL - 1) - 1) // STRIDE + 1


def flops(shape):
    # KERNEL^2 - 1 comparisons per output (padded taps counted).
    outs = shape["batch"] * shape["channels"] * _out(shape["height"]) * _out(shape["width"])
    return outs * (KERNEL * KERNEL - 1)


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + _out(shape["height"]) * _out(shape["width"])) * itemsize
