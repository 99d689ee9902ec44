"""SqueezeNet fire module: 1x1 squeeze + ReLU, then parallel 1x1 and 3x3 expand convs + ReLU, concatenated."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 16, "squeeze": 4, "expand": 8, "size": 17},
    {"batch": 1, "cin": 10, "squeeze": 3, "expand": 7, "size": 33},
    {"batch": 3, "cin": 24, "squeeze": 8, "expand": 16, "size": 9},
]
BENCH_SHAPE = {"batch": 128, "cin": 256, "squeeze": 64, "expand": 256, "size": 56}
CPU_BENCH_SHAPE = {"batch": 4, "cin": 64, "squeeze": 16, "expand": 64, "size": 28}


class Model(nn.Module):
    def __init__(self, cin: int, squeeze: int, expand: int):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.e1 = nn.Conv2d(squeeze, expand, 1)
        self.e3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.e1(s)), F.relu(self.e3(s))], dim=1)


def get_init_inputs(shape):
    return [shape["cin"], shape["squeeze"], shape["expand"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"], mean=0.3)]


# Cost convention: multiply-add = 2 flops; bias add and ReLU 1 flop per output element; concat is free.
# Bytes: input + weights/biases + output, once each.
def flops(shape):
    b, c, q, e, s = shape["batch"], shape["cin"], shape["squeeze"], shape["expand"], shape["size"]
    hw = s * s
    return b * hw * (q * (2 * c + 2) + e * (2 * q + 2) + e * (2 * 9 * q + 2))


def bytes_moved(shape, itemsize):
    b, c, q, e, s = shape["batch"], shape["cin"], shape["squeeze"], shape["expand"], shape["size"]
    params = (c * q + q) + (q * e + e) + (9 * q * e + e)
    return (b * c * s * s + params + b * 2 * e * s * s) * itemsize
