"""EfficientNet MBConv: 1x1 expand + BN + SiLU, 3x3 depthwise + BN + SiLU, squeeze-and-excite, 1x1 project + BN, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "size": 17},
    {"batch": 1, "channels": 12, "size": 33},
    {"batch": 3, "channels": 16, "size": 9},
]
BENCH_SHAPE = {"batch": 256, "channels": 64, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 32, "size": 28}
EXPAND = 6


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        h = channels * EXPAND
        r = max(1, channels // 4)
        self.expand = nn.Conv2d(channels, h, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(h)
        self.dw = nn.Conv2d(h, h, 3, padding=1, groups=h, bias=False)
        self.bn2 = nn.BatchNorm2d(h)
        self.se_reduce = nn.Conv2d(h, r, 1)
        self.se_expand = nn.Conv2d(r, h, 1)
        self.project = nn.Conv2d(h, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.silu(self.bn1(self.expand(x)))
        y = F.silu(self.bn2(self.dw(y)))
        g = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(y.mean(dim=(2, 3), keepdim=True)))))
        y = y * g
        return x + self.bn3(self.project(y))


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"], mean=0.2)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; SiLU, sigmoid, gating
# multiply, residual add and the mean-pool 1 flop/element. Bytes: input + parameters/buffers + output.
def flops(shape):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    h, hw, r = c * EXPAND, s * s, max(1, c // 4)
    f = b * h * hw * (2 * c + 3)               # expand + BN + SiLU
    f += b * h * hw * (2 * 9 + 3)              # depthwise + BN + SiLU
    f += b * h * hw                            # squeeze mean
    f += b * (r * (2 * h + 2) + h * (2 * r + 2))  # SE MLP (+bias, SiLU/sigmoid)
    f += b * h * hw                            # excite multiply
    f += b * c * hw * (2 * h + 3)              # project + BN + residual
    return f


def bytes_moved(shape, itemsize):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    h, r = c * EXPAND, max(1, c // 4)
    params = c * h + 9 * h + (h * r + r) + (r * h + h) + h * c + 4 * (2 * h + c)
    return (2 * b * c * s * s + params) * itemsize
