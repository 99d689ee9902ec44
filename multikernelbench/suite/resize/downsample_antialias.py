"""Anti-aliased bilinear 4x downsampling (F.interpolate, antialias=True) of an (N, C, H, W) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 68, "width": 36},
    {"batch": 1, "channels": 8, "height": 40, "width": 52},
    {"batch": 1, "channels": 3, "height": 128, "width": 132},
]
BENCH_SHAPE = {"batch": 32, "channels": 32, "height": 1024, "width": 1024}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 8, "height": 512, "width": 512}
FACTOR = 4


class Model(nn.Module):
    def __init__(self, factor: int):
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size = (x.shape[-2] // self.factor, x.shape[-1] // self.factor)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)


def get_init_inputs(shape):
    return [FACTOR]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    # Convention: separable triangle filter whose support spans 2 * FACTOR input pixels per axis;
    # a horizontal pass (H_in x W_out outputs) then a vertical pass (H_out x W_out outputs),
    # each tap a multiply-add (2 flops).  Per-output weight computation is not counted.
    nc = shape["batch"] * shape["channels"]
    h_out, w_out = shape["height"] // FACTOR, shape["width"] // FACTOR
    taps = 2 * FACTOR
    return nc * (shape["height"] * w_out + h_out * w_out) * taps * 2


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    h_out, w_out = shape["height"] // FACTOR, shape["width"] // FACTOR
    return nc * (shape["height"] * shape["width"] + h_out * w_out) * itemsize
