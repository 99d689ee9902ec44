"""3-D average pooling of an (N, C, D, H, W) tensor: kernel 3, stride 2, padding 1 (zeros counted)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "depth": 5, "height": 17, "width": 33},
    {"batch": 1, "channels": 8, "depth": 16, "height": 9, "width": 7},
    {"batch": 2, "channels": 4, "depth": 11, "height": 21, "width": 19},
]
BENCH_SHAPE = {"batch": 16, "channels": 64, "depth": 64, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 16, "depth": 32, "height": 64, "width": 64}
KERNEL, STRIDE, PAD = 3, 2, 1


class Model(nn.Module):
    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel, stride, padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_init_inputs(shape):
    return [KERNEL, STRIDE, PAD]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["depth"], shape["height"], shape["width"], mean=0.3)]


def _out(n):
    return (n + 2 * PAD - KERNEL) // STRIDE + 1


def _out_count(shape):
    return shape["batch"] * shape["channels"] * _out(shape["depth"]) * _out(shape["height"]) * _out(shape["width"])


def flops(shape):
    # Per output: KERNEL^3 - 1 adds (padded taps counted) + 1 divide = KERNEL^3.
    return _out_count(shape) * KERNEL ** 3


def bytes_moved(shape, itemsize):
    n_in = shape["batch"] * shape["channels"] * shape["depth"] * shape["height"] * shape["width"]
    return (n_in + _out_count(shape)) * itemsize
