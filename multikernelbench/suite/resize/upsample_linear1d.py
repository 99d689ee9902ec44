"""Linear 4x upsampling (align_corners=False) of an (N, C, L) sequence."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "length": 37},
    {"batch": 4, "channels": 16, "length": 1000},
    {"batch": 1, "channels": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 32, "channels": 256, "length": 16384}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 64, "length": 4096}
SCALE = 4


class Model(nn.Module):
    def __init__(self, scale: int):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=self.scale, mode="linear", align_corners=False)


def get_init_inputs(shape):
    return [SCALE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"])]


def flops(shape):
    # Convention: 2 taps x multiply-add = 4 per output element (shared weight math not counted).
    return 4 * shape["batch"] * shape["channels"] * shape["length"] * SCALE


def bytes_moved(shape, itemsize):
    return shape["batch"] * shape["channels"] * shape["length"] * (1 + SCALE) * itemsize
