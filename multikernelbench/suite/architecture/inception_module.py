"""GoogLeNet-style inception module: 1x1, 1x1->3x3, 1x1->5x5 and maxpool->1x1 branches with ReLU, concatenated."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 16, "width": 4, "size": 17},
    {"batch": 1, "cin": 10, "width": 6, "size": 33},
    {"batch": 3, "cin": 24, "width": 8, "size": 7},
]
BENCH_SHAPE = {"batch": 256, "cin": 192, "width": 32, "size": 28}
CPU_BENCH_SHAPE = {"batch": 4, "cin": 192, "width": 32, "size": 14}


class Model(nn.Module):
    """Branch widths follow inception(3a) ratios in units of `width`: 1x1: 2w, 3x3: 3w->4w, 5x5: w/2->w, pool: w."""

    def __init__(self, cin: int, width: int):
        super().__init__()
        w = width
        self.b1 = nn.Conv2d(cin, 2 * w, 1)
        self.b2a = nn.Conv2d(cin, 3 * w, 1)
        self.b2b = nn.Conv2d(3 * w, 4 * w, 3, padding=1)
        self.b3a = nn.Conv2d(cin, max(1, w // 2), 1)
        self.b3b = nn.Conv2d(max(1, w // 2), w, 5, padding=2)
        self.b4 = nn.Conv2d(cin, w, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y1 = F.relu(self.b1(x))
        y2 = F.relu(self.b2b(F.relu(self.b2a(x))))
        y3 = F.relu(self.b3b(F.relu(self.b3a(x))))
        y4 = F.relu(self.b4(F.max_pool2d(x, 3, stride=1, padding=1)))
        return torch.cat([y1, y2, y3, y4], dim=1)


def get_init_inputs(shape):
    return [shape["cin"], shape["width"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"], mean=0.2)]


# Cost convention: multiply-add = 2 flops; bias add and ReLU 1 flop per output element; 3x3 max-pool
# 9 comparisons per output element; concat free. Bytes: input + parameters + output.
def _convs(cin, w):
    h = max(1, w // 2)
    # (in channels, out channels, kernel taps)
    return [(cin, 2 * w, 1), (cin, 3 * w, 1), (3 * w, 4 * w, 9), (cin, h, 1), (h, w, 25), (cin, w, 1)]


def flops(shape):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    hw = s * s
    f = sum(b * co * hw * (2 * ci * k + 2) for ci, co, k in _convs(c, w))
    return f + b * c * hw * 9


def bytes_moved(shape, itemsize):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    params = sum(ci * co * k + co for ci, co, k in _convs(c, w))
    return (b * c * s * s + params + b * 8 * w * s * s) * itemsize
