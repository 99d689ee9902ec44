"""Temporal convolutional network: three residual blocks of two dilated causal conv1d (k=3, dilation 1/2/4) + ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "length": 37},
    {"batch": 3, "channels": 5, "length": 100},
    {"batch": 1, "channels": 16, "length": 17},
]
BENCH_SHAPE = {"batch": 64, "channels": 256, "length": 8192}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 64, "length": 1024}
DILATIONS = (1, 2, 4)
K = 3
TOLERANCE = {"float32": (3e-4, 3e-4)}  # six chained convolutions


class Block(nn.Module):
    def __init__(self, c: int, dilation: int):
        super().__init__()
        self.pad = (K - 1) * dilation
        self.conv1 = nn.Conv1d(c, c, K, dilation=dilation)
        self.conv2 = nn.Conv1d(c, c, K, dilation=dilation)

    def forward(self, x):
        y = F.relu(self.conv1(F.pad(x, (self.pad, 0))))
        y = F.relu(self.conv2(F.pad(y, (self.pad, 0))))
        return F.relu(x + y)


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(channels, d) for d in DILATIONS])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"], mean=0.2)]


# Cost convention: multiply-add = 2 flops (left zero padding counted as real taps); bias, ReLU, residual
# add 1 flop per element. Bytes: input + parameters + output.
def flops(shape):
    b, c, L = shape["batch"], shape["channels"], shape["length"]
    per_block = 2 * b * c * L * (2 * c * K + 2) + 2 * b * c * L
    return len(DILATIONS) * per_block


def bytes_moved(shape, itemsize):
    b, c, L = shape["batch"], shape["channels"], shape["length"]
    params = len(DILATIONS) * 2 * (c * c * K + c)
    return (2 * b * c * L + params) * itemsize
