"""Spatial-transformer warp: F.affine_grid from per-sample 2x3 matrices, then bilinear F.grid_sample."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 1, "channels": 16, "height": 9, "width": 7},
    {"batch": 3, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 64, "channels": 128, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 16, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    n = shape["batch"]
    x = randn(gen, n, shape["channels"], shape["height"], shape["width"])
    # Random rotations/scales/shears/translations near the identity.
    noise = randn(gen, n, 2, 3, std=0.25)
    theta = noise + torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], device=noise.device)
    return [x, theta]


def flops(shape):
    # Convention: per output pixel, affine grid 8 (two outputs, each 2 multiplies + 2 adds) plus the
    # bilinear sampler's 12 (unnormalise 4, fractions 4, corner weights 4); per output element
    # 4 taps x multiply-add = 8.
    points = shape["batch"] * shape["height"] * shape["width"]
    return points * (8 + 12 + 8 * shape["channels"])


def bytes_moved(shape, itemsize):
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return (2 * n + 6 * shape["batch"]) * itemsize  # x, output, theta (the grid is an intermediate)
