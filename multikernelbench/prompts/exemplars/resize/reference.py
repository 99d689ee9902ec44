"""Nearest-neighbour 2x upsampling of a (batch, channels, height, width) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 1, "channels": 3, "height": 5, "width": 7}, {"batch": 2, "channels": 4, "height": 16, "width": 33},
               {"batch": 1, "channels": 2, "height": 31, "width": 64}]
BENCH_SHAPE = {"batch": 16, "channels": 64, "height": 512, "width": 512}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 16, "height": 128, "width": 128}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2, mode="nearest")


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    return 0


def bytes_moved(shape, itemsize):
    return 5 * shape["batch"] * shape["channels"] * shape["height"] * shape["width"] * itemsize
