"""Tiny convolutional autoencoder: two strided conv+ReLU encoder layers, two transposed-conv decoder layers, sigmoid output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 3, "width": 8, "size": 16},
    {"batch": 1, "cin": 1, "width": 5, "size": 36},
    {"batch": 3, "cin": 2, "width": 12, "size": 12},
]
BENCH_SHAPE = {"batch": 64, "cin": 3, "width": 64, "size": 256}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 3, "width": 16, "size": 64}


class Model(nn.Module):
    def __init__(self, cin: int, width: int):
        super().__init__()
        w = width
        self.e1 = nn.Conv2d(cin, w, 4, stride=2, padding=1)
        self.e2 = nn.Conv2d(w, 2 * w, 4, stride=2, padding=1)
        self.d1 = nn.ConvTranspose2d(2 * w, w, 4, stride=2, padding=1)
        self.d2 = nn.ConvTranspose2d(w, cin, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.relu(self.e2(F.relu(self.e1(x))))
        return torch.sigmoid(self.d2(F.relu(self.d1(z))))


def get_init_inputs(shape):
    return [shape["cin"], shape["width"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; bias, ReLU, sigmoid 1 flop per output element. A 4x4 stride-2
# transposed conv touches 16 taps per input pixel, i.e. 4 taps per output pixel on average.
# Bytes: input + parameters + output (size divisible by 4).
def flops(shape):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    h1, h2 = (s // 2) ** 2, (s // 4) ** 2
    f = b * w * h1 * (2 * c * 16 + 2)          # e1
    f += b * 2 * w * h2 * (2 * w * 16 + 2)     # e2
    f += b * w * h1 * (2 * 2 * w * 4 + 2)      # d1 (transposed)
    f += b * c * s * s * (2 * w * 4 + 2)       # d2 (transposed) + sigmoid
    return f


def bytes_moved(shape, itemsize):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    params = (16 * c * w + w) + (16 * w * 2 * w + 2 * w) + (16 * 2 * w * w + w) + (16 * w * c + c)
    return (2 * b * c * s * s + params) * itemsize
