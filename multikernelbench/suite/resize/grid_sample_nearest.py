"""F.grid_sample, nearest mode, border padding, align_corners=True, with random sampling grids in [-1, 1]."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn, uniform

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33, "out_h": 11, "out_w": 13},
    {"batch": 1, "channels": 16, "height": 9, "width": 7, "out_h": 20, "out_w": 21},
    {"batch": 3, "channels": 5, "height": 37, "width": 41, "out_h": 37, "out_w": 41},
]
BENCH_SHAPE = {"batch": 64, "channels": 128, "height": 256, "width": 256, "out_h": 256, "out_w": 256}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 32, "height": 96, "width": 96, "out_h": 96, "out_w": 96}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=True)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n = shape["batch"]
    x = randn(gen, n, shape["channels"], shape["height"], shape["width"])
    # Slightly beyond [-1, 1] so the border clamp is exercised.
    grid = uniform(gen, n, shape["out_h"], shape["out_w"], 2, low=-1.05, high=1.05)
    return [x, grid]


def flops(shape):
    # Convention: per grid point, unnormalise x and y (2 multiply-adds = 4) and round (2) = 6;
    # the per-channel copies are data movement.
    return 6 * shape["batch"] * shape["out_h"] * shape["out_w"]


def bytes_moved(shape, itemsize):
    n, c = shape["batch"], shape["channels"]
    points = n * shape["out_h"] * shape["out_w"]
    return (n * c * shape["height"] * shape["width"] + 2 * points + c * points) * itemsize
