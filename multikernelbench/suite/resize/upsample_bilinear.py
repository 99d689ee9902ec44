"""Bilinear resize (align_corners=False) of an (N, C, H, W) tensor to a given, non-integer-ratio output size."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33, "out_h": 40, "out_w": 50},
    {"batch": 4, "channels": 16, "height": 9, "width": 7, "out_h": 20, "out_w": 13},
    {"batch": 1, "channels": 5, "height": 37, "width": 41, "out_h": 64, "out_w": 99},
]
BENCH_SHAPE = {"batch": 64, "channels": 64, "height": 256, "width": 256, "out_h": 448, "out_w": 448}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 32, "height": 64, "width": 64, "out_h": 112, "out_w": 112}


class Model(nn.Module):
    def __init__(self, out_h: int, out_w: int):
        super().__init__()
        self.size = (out_h, out_w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, size=self.size, mode="bilinear", align_corners=False)


def get_init_inputs(shape):
    return [shape["out_h"], shape["out_w"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    # Convention: 4 taps x multiply-add = 8 per output element; per-row/column source indices and
    # weights are shared across N*C and not counted.
    return 8 * shape["batch"] * shape["channels"] * shape["out_h"] * shape["out_w"]


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + shape["out_h"] * shape["out_w"]) * itemsize
