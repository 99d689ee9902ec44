"""ShuffleNetV2 unit (stride 1): channel split, 1x1-dw3x3-1x1 branch with BN/ReLU on one half, concat, channel shuffle."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "size": 17},
    {"batch": 1, "channels": 12, "size": 33},
    {"batch": 3, "channels": 24, "size": 9},
]
BENCH_SHAPE = {"batch": 128, "channels": 232, "size": 112}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 116, "size": 28}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        h = channels // 2
        self.pw1 = nn.Conv2d(h, h, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(h)
        self.dw = nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False)
        self.bn2 = nn.BatchNorm2d(h)
        self.pw2 = nn.Conv2d(h, h, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, dim=1)
        b = F.relu(self.bn1(self.pw1(b)))
        b = self.bn2(self.dw(b))
        b = F.relu(self.bn3(self.pw2(b)))
        y = torch.cat([a, b], dim=1)
        n, c, hh, ww = y.shape
        return y.view(n, 2, c // 2, hh, ww).transpose(1, 2).reshape(n, c, hh, ww)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"], mean=0.1)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element, ReLU 1 flop/element;
# split, concat and shuffle are data movement only. Bytes: input + parameters/buffers + output.
def flops(shape):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    h, hw = c // 2, s * s
    return b * h * hw * ((2 * h + 3) + (2 * 9 + 2) + (2 * h + 3))


def bytes_moved(shape, itemsize):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    h = c // 2
    params = h * h + 9 * h + h * h + 3 * 4 * h
    return (2 * b * c * s * s + params) * itemsize
