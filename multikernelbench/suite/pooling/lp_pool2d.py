"""2-D power-average (L2) pooling: (sum over a 3 x 3 window of x^2)^(1/2), stride 2."""

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
CPU_BENCH_SHAPE = {"batch": 8, "channels": 32, "height": 128, "width": 128}
NORM, KERNEL, STRIDE = 2.0, 3, 2


class Model(nn.Module):
    def __init__(self, norm: float, kernel: int, stride: int):
        super().__init__()
        self.pool = nn.LPPool2d(norm, kernel, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_init_inputs(shape):
    return [NORM, KERNEL, STRIDE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def _out(n):
    return (n - KERNEL) // STRIDE + 1


def flops(shape):
    # Per output: KERNEL^2 squares + (KERNEL^2 - 1) adds + 1 square root = 2 KERNEL^2.
    outs = shape["batch"] * shape["channels"] * _out(shape["height"]) * _out(shape["width"])
    return outs * 2 * KERNEL * KERNEL


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + _out(shape["height"]) * _out(shape["width"])) * itemsize
