"""1-D convolution (stride 1, no padding, with bias) of a (batch, in_channels, length) tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 2, "cin": 3, "cout": 4, "k": 3, "length": 37},
               {"batch": 1, "cin": 8, "cout": 16, "k": 5, "length": 130},
               {"batch": 3, "cin": 5, "cout": 7, "k": 4, "length": 301}]
BENCH_SHAPE = {"batch": 32, "cin": 256, "cout": 256, "k": 5, "length": 16384}
CPU_BENCH_SHAPE = {"batch": 4, "cin": 64, "cout": 64, "k": 5, "length": 2048}
# Accumulates cin * k products per output: rounding depends on the order.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_init_inputs(shape):
    return [shape["cin"], shape["cout"], shape["k"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["length"])]


def _out_len(shape):
    return shape["length"] - shape["k"] + 1


def flops(shape):
    return 2 * shape["batch"] * shape["cout"] * _out_len(shape) * shape["cin"] * shape["k"]


def bytes_moved(shape, itemsize):
    s = shape
    return (s["batch"] * s["cin"] * s["length"] + s["cout"] * s["cin"] * s["k"] + s["cout"]
            + s["batch"] * s["cout"] * _out_len(s)) * itemsize
