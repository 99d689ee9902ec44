"""Trilinear 2x upsampling (align_corners=False) of an (N, C, D, H, W) volume."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "depth": 5, "height": 17, "width": 13},
    {"batch": 1, "channels": 8, "depth": 9, "height": 7, "width": 11},
    {"batch": 1, "channels": 2, "depth": 16, "height": 21, "width": 19},
]
BENCH_SHAPE = {"batch": 8, "channels": 32, "depth": 32, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 1, "channels": 8, "depth": 8, "height": 64, "width": 64}
SCALE = 2


class Model(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=self.scale, mode="trilinear", align_corners=False)


def get_init_inputs(shape):
    return [SCALE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["depth"], shape["height"], shape["width"])]


def flops(shape):
    # Convention: 8 taps x multiply-add = 16 per output element (shared weight math not counted).
    n_in = shape["batch"] * shape["channels"] * shape["depth"] * shape["height"] * shape["width"]
    return 16 * n_in * SCALE ** 3


def bytes_moved(shape, itemsize):
    n_in = shape["batch"] * shape["channels"] * shape["depth"] * shape["height"] * shape["width"]
    return n_in * (1 + SCALE ** 3) * itemsize
