"""1-D average pooling of an (N, C, L) tensor: kernel 5, stride 2, padding 2 (zeros counted in the average)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "length": 37},
    {"batch": 4, "channels": 16, "length": 1000},
    {"batch": 1, "channels": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 32, "channels": 256, "length": 65536}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "length": 8192}
KERNEL, STRIDE, PAD = 5, 2, 2


class Model(nn.Module):
    def __init__(self, kernel: int, stride: int, padding: int):
        super().__init__()
        self.kernel, self.stride, self.padding = kernel, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool1d(x, self.kernel, self.stride, self.padding, count_include_pad=True)


def get_init_inputs(shape):
    return [KERNEL, STRIDE, PAD]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"], mean=0.3)]


def _out_len(shape):
    return (shape["length"] + 2 * PAD - KERNEL) // STRIDE + 1


def flops(shape):
    # Per output: KERNEL - 1 adds (padded taps counted) + 1 divide = KERNEL.
    return shape["batch"] * shape["channels"] * _out_len(shape) * KERNEL


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["length"] + _out_len(shape)) * itemsize
