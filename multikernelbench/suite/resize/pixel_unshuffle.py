"""Pixel unshuffle (space-to-depth) with factor 3: (N, C, 3H, 3W) -> (N, 9C, H, W)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 11},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 32, "channels": 32, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 8, "height": 96, "width": 96}
R = 3


class Model(nn.Module):
    def __init__(self, r: int):
        super().__init__()
        self.r = r

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pixel_unshuffle(x, self.r)


def get_init_inputs(shape):
    return [R]


def get_inputs(shape, gen):
    # height/width are the output spatial sizes; the input is R times larger in each.
    return [randn(gen, shape["batch"], shape["channels"], shape["height"] * R, shape["width"] * R)]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["channels"] * R * R * shape["height"] * shape["width"] * itemsize
