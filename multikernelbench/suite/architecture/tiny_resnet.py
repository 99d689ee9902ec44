"""Tiny ResNet classifier: conv stem, two stages of two basic blocks (second stage strided), global pool, linear head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "width": 8, "size": 17, "classes": 10},
    {"batch": 3, "width": 4, "size": 32, "classes": 7},
    {"batch": 1, "width": 6, "size": 37, "classes": 33},
]
BENCH_SHAPE = {"batch": 256, "width": 64, "size": 64, "classes": 1000}
CPU_BENCH_SHAPE = {"batch": 4, "width": 16, "size": 32, "classes": 10}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # nine stacked convolutions accumulate rounding


class Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.short is None else self.short(x)))


class Model(nn.Module):
    def __init__(self, width: int, classes: int):
        super().__init__()
        w = width
        self.stem = nn.Conv2d(3, w, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(w)
        self.blocks = nn.Sequential(Block(w, w, 1), Block(w, w, 1), Block(w, 2 * w, 2), Block(2 * w, 2 * w, 1))
        self.fc = nn.Linear(2 * w, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn(self.stem(x)))
        x = self.blocks(x)
        return self.fc(x.mean(dim=(2, 3)))


def get_init_inputs(shape):
    return [shape["width"], shape["classes"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], 3, shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; inference BatchNorm 2 flops/element; ReLU, residual add and
# the mean-pool 1 flop per element. Bytes: input + all parameters/BN buffers + logits, once each.
def _costs(shape):
    b, w, s, k = shape["batch"], shape["width"], shape["size"], shape["classes"]
    s2 = (s - 1) // 2 + 1
    hw, hw2 = s * s, s2 * s2
    f = b * w * hw * (2 * 27 + 3)                                  # stem conv + BN + ReLU
    p = 27 * w + 4 * w

    def basic(cin, cout, hw_out, short):
        ff = b * cout * hw_out * (2 * cin * 9 + 3)                 # conv1 + BN + ReLU
        ff += b * cout * hw_out * (2 * cout * 9 + 2)               # conv2 + BN
        pp = 9 * cin * cout + 9 * cout * cout + 8 * cout
        if short:
            ff += b * cout * hw_out * (2 * cin + 2)
            pp += cin * cout + 4 * cout
        ff += b * cout * hw_out * 2                                # add + ReLU
        return ff, pp

    for cin, cout, hwo, short in ((w, w, hw, False), (w, w, hw, False), (w, 2 * w, hw2, True),
                                  (2 * w, 2 * w, hw2, False)):
        ff, pp = basic(cin, cout, hwo, short)
        f += ff
        p += pp
    f += b * 2 * w * hw2                                           # global average pool
    f += b * k * (2 * 2 * w + 1)                                   # head
    p += 2 * w * k + k
    return f, p


def flops(shape):
    return _costs(shape)[0]


def bytes_moved(shape, itemsize):
    b = shape["batch"]
    return (b * 3 * shape["size"] ** 2 + _costs(shape)[1] + b * shape["classes"]) * itemsize
