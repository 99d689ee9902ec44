"""Pixel shuffle (depth-to-space) with upscale factor 2: (N, C*4, H, W) -> (N, C, 2H, 2W)."""

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
BENCH_SHAPE = {"batch": 32, "channels": 64, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 16, "height": 128, "width": 128}
R = 2


class Model(nn.Module):
    def __init__(self, r: int):
        super().__init__()
        self.shuffle = nn.PixelShuffle(r)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shuffle(x)


def get_init_inputs(shape):
    return [R]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"] * R * R, shape["height"], shape["width"])]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["channels"] * R * R * shape["height"] * shape["width"] * itemsize
