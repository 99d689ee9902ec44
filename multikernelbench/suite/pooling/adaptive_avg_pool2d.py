"""Adaptive 2-D average pooling of an (N, C, H, W) tensor to a 7 x 7 output (windows of uneven size)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 37, "height": 30, "width": 41},
]
BENCH_SHAPE = {"batch": 128, "channels": 512, "height": 113, "width": 113}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "height": 56, "width": 56}
OUT = 7


class Model(nn.Module):
    def __init__(self, out: int):
        super().__init__()
        self.out = out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(x, (self.out, self.out))


def get_init_inputs(shape):
    return [OUT]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=0.2)]


def _window_total(n, out):
    # Window i covers [floor(i n / out), ceil((i + 1) n / out)); windows may overlap.
    return sum(-(-((i + 1) * n) // out) - (i * n) // out for i in range(out))


def flops(shape):
    # Per output window of a x b elements: a*b - 1 adds + 1 divide = a*b, so the total is the
    # product of the summed window extents along H and W.
    return shape["batch"] * shape["channels"] * _window_total(shape["height"], OUT) * _window_total(shape["width"], OUT)


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + OUT * OUT) * itemsize
