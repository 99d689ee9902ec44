"""One U-Net level: double conv encoder, max-pool, double conv bottleneck, transposed-conv upsample, skip concat, double conv decoder."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "cin": 3, "width": 8, "size": 16},
    {"batch": 1, "cin": 1, "width": 5, "size": 34},
    {"batch": 3, "cin": 4, "width": 4, "size": 10},
]
BENCH_SHAPE = {"batch": 16, "cin": 3, "width": 64, "size": 256}
CPU_BENCH_SHAPE = {"batch": 1, "cin": 3, "width": 16, "size": 64}
TOLERANCE = {"float32": (5e-4, 5e-4)}  # seven chained convolutions


def _double(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class Model(nn.Module):
    def __init__(self, cin: int, width: int):
        super().__init__()
        w = width
        self.enc = _double(cin, w)
        self.mid = _double(w, 2 * w)
        self.up = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec = _double(2 * w, w)
        self.head = nn.Conv2d(w, cin, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.enc(x)
        m = self.mid(F.max_pool2d(e, 2))
        u = self.up(m)
        return self.head(self.dec(torch.cat([e, u], dim=1)))


def get_init_inputs(shape):
    return [shape["cin"], shape["width"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; bias add and ReLU 1 flop per output element; max-pool one
# comparison per window element; concat free. Bytes: input + parameters + output once each (size is even).
def _conv(b, cin, cout, hw, k, relu=True):
    return b * cout * hw * (2 * cin * k * k + 1 + (1 if relu else 0))


def flops(shape):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    hw, hw2 = s * s, (s // 2) ** 2
    f = _conv(b, c, w, hw, 3) + _conv(b, w, w, hw, 3)
    f += b * w * hw2 * 4
    f += _conv(b, w, 2 * w, hw2, 3) + _conv(b, 2 * w, 2 * w, hw2, 3)
    f += b * w * hw * (2 * 2 * w + 1)        # transposed conv 2x2 stride 2: each output pixel gets one tap
    f += _conv(b, 2 * w, w, hw, 3) + _conv(b, w, w, hw, 3)
    f += _conv(b, w, c, hw, 1, relu=False)
    return f


def bytes_moved(shape, itemsize):
    b, c, w, s = shape["batch"], shape["cin"], shape["width"], shape["size"]
    params = (9 * c * w + w) + (9 * w * w + w) + (9 * w * 2 * w + 2 * w) + (9 * 4 * w * w + 2 * w)
    params += (2 * w * w * 4 + w) + (9 * 2 * w * w + w) + (9 * w * w + w) + (w * c + c)
    return (2 * b * c * s * s + params) * itemsize
