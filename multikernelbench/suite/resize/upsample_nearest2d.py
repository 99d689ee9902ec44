"""Nearest-neighbour 2x upsampling of an (N, C, H, W) tensor (F.interpolate, mode='nearest')."""

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
BENCH_SHAPE = {"batch": 64, "channels": 64, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 32, "height": 64, "width": 64}
SCALE = 2


class Model(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=self.scale, mode="nearest")


def get_init_inputs(shape):
    return [SCALE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    n_in = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return n_in * (1 + SCALE * SCALE) * itemsize
