"""ResNet bottleneck block with stride-2 projection shortcut (1x1-3x3-1x1 convs, inference BatchNorm, ReLU)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 16, "mid": 8, "size": 17},
    {"batch": 1, "cin": 12, "mid": 5, "size": 33},
    {"batch": 3, "cin": 8, "mid": 4, "size": 10},
]
BENCH_SHAPE = {"batch": 128, "cin": 256, "mid": 128, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 64, "mid": 32, "size": 32}
TOLERANCE = {"float32": (2e-4, 2e-4)}  # three stacked convolutions plus a projection


class Model(nn.Module):
    def __init__(self, cin: int, mid: int):
        super().__init__()
        cout = 4 * mid
        self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.proj = nn.Conv2d(cin, cout, 1, stride=2, bias=False)
        self.bnp = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + self.bnp(self.proj(x)))


def get_init_inputs(shape):
    return [shape["cin"], shape["mid"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"], mean=0.2)]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; ReLU and add 1 flop/element.
# Bytes: input + conv weights + BN (weight, bias, running mean, running var) + output, once each.
def flops(shape):
    b, cin, m, s = shape["batch"], shape["cin"], shape["mid"], shape["size"]
    so = (s - 1) // 2 + 1
    hw, hwo = s * s, so * so
    cout = 4 * m
    f = b * m * hw * (2 * cin + 2 + 1)            # conv1 + BN + ReLU
    f += b * m * hwo * (2 * m * 9 + 2 + 1)        # conv2 (stride 2) + BN + ReLU
    f += b * cout * hwo * (2 * m + 2)             # conv3 + BN
    f += b * cout * hwo * (2 * cin + 2)           # projection + BN
    f += b * cout * hwo * 2                       # add + ReLU
    return f


def bytes_moved(shape, itemsize):
    b, cin, m, s = shape["batch"], shape["cin"], shape["mid"], shape["size"]
    so = (s - 1) // 2 + 1
    cout = 4 * m
    params = cin * m + m * m * 9 + m * cout + cin * cout + 4 * (m + m + cout + cout)
    return (b * cin * s * s + params + b * cout * so * so) * itemsize
