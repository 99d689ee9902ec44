"""Two VGG-style blocks (conv3x3+ReLU, conv3x3+ReLU, 2x2 max-pool), channels doubling per block."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 3, "width": 8, "size": 17},
    {"batch": 1, "cin": 5, "width": 16, "size": 33},
    {"batch": 3, "cin": 3, "width": 4, "size": 12},
]
BENCH_SHAPE = {"batch": 32, "cin": 3, "width": 64, "size": 224}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 3, "width": 16, "size": 64}


class Model(nn.Module):
    def __init__(self, cin: int, width: int):
        super().__init__()
        self.c11 = nn.Conv2d(cin, width, 3, padding=1)
        self.c12 = nn.Conv2d(width, width, 3, padding=1)
        self.c21 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.c22 = nn.Conv2d(2 * width, 2 * width, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.c12(F.relu(self.c11(x))))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.c22(F.relu(self.c21(x))))
        return F.max_pool2d(x, 2)


def get_init_inputs(shape):
    return [shape["cin"], shape["width"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; bias add and ReLU 1 flop per output element; max-pool one
# comparison per window element. Bytes: input + parameters + output once each.
def _conv(b, cin, cout, hw):
    return b * cout * hw * (2 * cin * 9 + 2)  # MACs + bias + ReLU


def flops(shape):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    s2 = s // 2
    s4 = s2 // 2
    f = _conv(b, c, w, s * s) + _conv(b, w, w, s * s) + b * w * s2 * s2 * 4
    f += _conv(b, w, 2 * w, s2 * s2) + _conv(b, 2 * w, 2 * w, s2 * s2) + b * 2 * w * s4 * s4 * 4
    return f


def bytes_moved(shape, itemsize):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    params = (c * w * 9 + w) + (w * w * 9 + w) + (w * 2 * w * 9 + 2 * w) + (4 * w * w * 9 + 2 * w)
    s4 = (s // 2) // 2
    return (b * c * s * s + params + b * 2 * w * s4 * s4) * itemsize
