"""Depthwise-separable 2-D convolution: 3x3 depthwise (padding 1, bias) followed by a 1x1 pointwise conv (bias)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "cin": 5, "cout": 8, "h": 17, "w": 33},
    {"batch": 1, "cin": 16, "cout": 33, "h": 37, "w": 37},
    {"batch": 3, "cin": 33, "cout": 12, "h": 20, "w": 29},
]
# Memory-bound at this shape: a fused kernel streams the input once and writes the output once.
BENCH_SHAPE = {"batch": 64, "cin": 256, "cout": 512, "h": 112, "w": 112}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 64, "cout": 128, "h": 56, "w": 56}
# The pointwise stage sums cin products of depthwise outputs (themselves 9-term sums); different
# accumulation orders and algorithms cost a few fp32 bits: widen fp32 to 1e-3.
TOLERANCE = {"float32": (1e-3, 1e-3)}


class Model(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.depthwise = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=True)
        self.pointwise = nn.Conv2d(cin, cout, 1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_init_inputs(shape):
    return [shape["cin"], shape["cout"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["h"], shape["w"])]


def flops(shape):
    n, ci, co, h, w = shape["batch"], shape["cin"], shape["cout"], shape["h"], shape["w"]
    pix = n * h * w  # both stages keep the spatial size (3x3, padding 1, stride 1)
    depthwise = 2 * pix * ci * 9 + pix * ci  # 9 multiply-adds per output + bias add
    pointwise = 2 * pix * co * ci + pix * co  # cin multiply-adds per output + bias add
    return depthwise + pointwise


def bytes_moved(shape, itemsize):
    n, ci, co, h, w = shape["batch"], shape["cin"], shape["cout"], shape["h"], shape["w"]
    params = ci * 9 + ci + co * ci + co
    # The intermediate depthwise output is not compulsory traffic: a fused kernel keeps it on chip.
    return (n * ci * h * w + params + n * co * h * w) * itemsize
