"""MobileNetV2 inverted residual: 1x1 expand + BN + ReLU6, 3x3 depthwise + BN + ReLU6, 1x1 project + BN, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "expand": 6, "size": 17},
    {"batch": 1, "channels": 5, "expand": 4, "size": 33},
    {"batch": 3, "channels": 12, "expand": 3, "size": 9},
]
BENCH_SHAPE = {"batch": 256, "channels": 64, "expand": 6, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 32, "expand": 6, "size": 28}


class Model(nn.Module):
    def __init__(self, channels: int, expand: int):
        super().__init__()
        h = channels * expand
        self.expand = nn.Conv2d(channels, h, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(h)
        self.dw = nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False)
        self.bn2 = nn.BatchNorm2d(h)
        self.project = nn.Conv2d(h, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.relu6(self.bn2(self.dw(y)))
        return x + self.bn3(self.project(y))


def get_init_inputs(shape):
    return [shape["channels"], shape["expand"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"], mean=0.3)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; ReLU6 (a clamp) and the
# residual add 1 flop/element. Bytes: input + weights + BN params/buffers + output, once each.
def flops(shape):
    b, c, e, s = shape["batch"], shape["channels"], shape["expand"], shape["size"]
    h, hw = c * e, s * s
    f = b * h * hw * (2 * c + 3)       # expand + BN + ReLU6
    f += b * h * hw * (2 * 9 + 3)      # depthwise + BN + ReLU6
    f += b * c * hw * (2 * h + 2 + 1)  # project + BN + residual
    return f


def bytes_moved(shape, itemsize):
    b, c, e, s = shape["batch"], shape["channels"], shape["expand"], shape["size"]
    h = c * e
    params = c * h + 9 * h + h * c + 4 * (h + h + c)
    return (2 * b * c * s * s + params) * itemsize
