"""Bicubic 2x upsampling (align_corners=False) of an (N, C, H, W) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 64, "channels": 64, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 16, "height": 64, "width": 64}
SCALE = 2


class Model(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=self.scale, mode="bicubic", align_corners=False)


def get_init_inputs(shape):
    return [SCALE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    # Convention: 4 x 4 taps x multiply-add = 32 per output element (shared weight math not counted).
    n_in = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return 32 * n_in * SCALE * SCALE


def bytes_moved(shape, itemsize):
    n_in = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return n_in * (1 + SCALE * SCALE) * itemsize
