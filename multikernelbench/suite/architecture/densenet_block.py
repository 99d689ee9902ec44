"""DenseNet dense block: four BN-ReLU-conv1x1-BN-ReLU-conv3x3 layers, each output concatenated onto the features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 8, "growth": 4, "size": 17},
    {"batch": 1, "cin": 5, "growth": 6, "size": 33},
    {"batch": 3, "cin": 12, "growth": 3, "size": 9},
]
BENCH_SHAPE = {"batch": 64, "cin": 128, "growth": 32, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 32, "growth": 16, "size": 28}
LAYERS = 4
TOLERANCE = {"float32": (2e-4, 2e-4)}  # eight chained convolutions along the deepest path


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, 4 * growth, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth)
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, x):
        y = self.conv1(F.relu(self.bn1(x)))
        return self.conv2(F.relu(self.bn2(y)))


class Model(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(cin + i * growth, growth) for i in range(LAYERS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = x
        for layer in self.layers:
            feats = torch.cat([feats, layer(feats)], dim=1)
        return feats


def get_init_inputs(shape):
    return [shape["cin"], shape["growth"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element, ReLU 1 flop/element;
# concatenation is free. Bytes: input + weights + BN params/buffers + the concatenated output, once each.
def _costs(shape):
    b, c, g, s = shape["batch"], shape["cin"], shape["growth"], shape["size"]
    hw = s * s
    f = p = 0
    for i in range(LAYERS):
        ci = c + i * g
        f += b * ci * hw * 3                          # BN + ReLU on the input features
        f += b * 4 * g * hw * (2 * ci + 3)            # 1x1 conv + BN + ReLU
        f += b * g * hw * 2 * 4 * g * 9               # 3x3 conv
        p += 4 * ci + ci * 4 * g + 4 * 4 * g + 4 * g * g * 9
    return f, p


def flops(shape):
    return _costs(shape)[0]


def bytes_moved(shape, itemsize):
    b, c, g, s = shape["batch"], shape["cin"], shape["growth"], shape["size"]
    return (b * c * s * s + _costs(shape)[1] + b * (c + LAYERS * g) * s * s) * itemsize
