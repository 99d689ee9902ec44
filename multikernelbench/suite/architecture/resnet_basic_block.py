"""ResNet basic block (conv3x3-BN-ReLU-conv3x3-BN + identity shortcut, ReLU), BatchNorm in inference mode."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 8, "size": 17},
    {"batch": 1, "channels": 16, "size": 33},
    {"batch": 3, "channels": 5, "size": 9},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 32, "size": 32}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # two stacked convs of 9*C terms each


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + x)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    c, s = shape["channels"], shape["size"]
    return [randn(gen, shape["batch"], c, s, s, mean=0.3)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm = 2 flops/element (scale, shift);
# ReLU and residual add 1 flop/element. Bytes: input, weights, BN parameters+running stats, output.
def flops(shape):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    n = b * c * s * s
    return 2 * (n * 2 * c * 9 + 2 * n) + n + n + n  # two conv+BN, ReLU, add, ReLU


def bytes_moved(shape, itemsize):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    params = 2 * (c * c * 9) + 2 * 4 * c
    return (2 * b * c * s * s + params) * itemsize
