"""ResNeXt block: 1x1 conv, 3x3 grouped conv (cardinality 32), 1x1 conv, inference BatchNorm + ReLU, identity residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 16, "group_width": 1, "size": 17},
    {"batch": 1, "channels": 32, "group_width": 2, "size": 13},
    {"batch": 3, "channels": 8, "group_width": 3, "size": 9},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "group_width": 4, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 128, "group_width": 2, "size": 28}
CARDINALITY = 32
TOLERANCE = {"float32": (2e-4, 2e-4)}  # three stacked convolutions


class Model(nn.Module):
    def __init__(self, channels: int, group_width: int):
        super().__init__()
        m = CARDINALITY * group_width
        self.conv1 = nn.Conv2d(channels, m, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(m)
        self.conv2 = nn.Conv2d(m, m, 3, padding=1, groups=CARDINALITY, bias=False)
        self.bn2 = nn.BatchNorm2d(m)
        self.conv3 = nn.Conv2d(m, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        return F.relu(x + self.bn3(self.conv3(y)))


def get_init_inputs(shape):
    return [shape["channels"], shape["group_width"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"], mean=0.2)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; ReLU and add 1 flop/element.
# Bytes: input + weights + BN params/buffers + output.
def flops(shape):
    b, c, g, s = shape["batch"], shape["channels"], shape["group_width"], shape["size"]
    m, hw = CARDINALITY * g, s * s
    return b * hw * (m * (2 * c + 3) + m * (2 * 9 * g + 3) + c * (2 * m + 2 + 2))


def bytes_moved(shape, itemsize):
    b, c, g, s = shape["batch"], shape["channels"], shape["group_width"], shape["size"]
    m = CARDINALITY * g
    params = c * m + 9 * g * m + m * c + 4 * (2 * m + c)
    return (2 * b * c * s * s + params) * itemsize
