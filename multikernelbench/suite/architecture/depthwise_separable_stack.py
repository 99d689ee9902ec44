"""MobileNetV1-style stack of three depthwise-separable layers (dw3x3-BN-ReLU, pw1x1-BN-ReLU), the second strided."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "size": 17},
    {"batch": 1, "channels": 5, "size": 33},
    {"batch": 3, "channels": 16, "size": 8},
]
BENCH_SHAPE = {"batch": 128, "channels": 128, "size": 112}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 32, "size": 56}


class DS(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn2(self.pw(F.relu(self.bn1(self.dw(x))))))


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        c = channels
        self.layers = nn.Sequential(DS(c, c, 1), DS(c, 2 * c, 2), DS(2 * c, 2 * c, 1))
        # He (fan-in) init; PyTorch's default init shrinks the signal ~1000x here.
        for mod in self.modules():
            if isinstance(mod, nn.Conv2d):
                nn.init.kaiming_normal_(mod.weight, mode="fan_in", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; ReLU 1 flop/element.
# Bytes: input + weights + BN params/buffers + output.
def _layers(c, s):
    s2 = (s - 1) // 2 + 1
    # (cin, cout, output spatial size)
    return [(c, c, s), (c, 2 * c, s2), (2 * c, 2 * c, s2)]


def flops(shape):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    f = 0
    for ci, co, so in _layers(c, s):
        f += b * ci * so * so * (2 * 9 + 3) + b * co * so * so * (2 * ci + 3)
    return f


def bytes_moved(shape, itemsize):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    params = sum(9 * ci + 4 * ci + ci * co + 4 * co for ci, co, _ in _layers(c, s))
    so = (s - 1) // 2 + 1
    return (b * c * s * s + params + b * 2 * c * so * so) * itemsize
