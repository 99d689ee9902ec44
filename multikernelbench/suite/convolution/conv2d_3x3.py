"""2-D convolution, 3x3 kernel, stride 1, padding 1, with bias (a ResNet body layer)."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

SPATIAL = ('h', 'w')  # names of the spatial sizes in a shape dict, outermost first
KERNEL = (3, 3)
STRIDE = (1, 1)
PADDING = (1, 1)
DILATION = (1, 1)
GROUPS = 1
BIAS = True

DTYPES = ('float32', 'bfloat16')
TEST_SHAPES = [
    {"batch": 2, "cin": 3, "cout": 8, "h": 17, "w": 33},
    {"batch": 1, "cin": 16, "cout": 16, "h": 37, "w": 37},
    {"batch": 3, "cin": 8, "cout": 5, "h": 20, "w": 29},
]
BENCH_SHAPE = {"batch": 64, "cin": 256, "cout": 256, "h": 112, "w": 112}
CPU_BENCH_SHAPE = {"batch": 2, "cin": 64, "cout": 64, "h": 56, "w": 56}
# Each output sums cin/groups * prod(KERNEL) products; conv algorithms (implicit GEMM, Winograd, FFT)
# order and transform that sum differently, which costs several fp32 bits: widen fp32 to 1e-3.
TOLERANCE = {'float32': (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(
            cin, cout, KERNEL, stride=STRIDE, padding=PADDING,
            dilation=DILATION, groups=groups, bias=BIAS,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def _groups(shape):
    return GROUPS


def get_init_inputs(shape):
    return [shape["cin"], shape["cout"], _groups(shape)]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["cin"], shape["h"], shape["w"])]


def _out_sizes(shape):
    # out = floor((in + 2 * padding - dilation * (k - 1) - 1) / stride) + 1
    return [(shape[n] + 2 * p - d * (k - 1) - 1) // s + 1
            for n, k, s, p, d in zip(SPATIAL, KERNEL, STRIDE, PADDING, DILATION)]


def flops(shape):
    g = _groups(shape)
    n_in = shape["batch"] * shape["cin"] * math.prod(shape[n] for n in SPATIAL)
    n_out = shape["batch"] * shape["cout"] * math.prod(_out_sizes(shape))
    # Every output element is a dot product of length cin/groups * prod(KERNEL) (multiply-add = 2 flops);
    # taps that fall in the zero padding are counted too (a dense kernel computes them).
    macs = n_out * (shape["cin"] // g) * math.prod(KERNEL)
    return 2 * macs + (n_out if BIAS else 0)  # + one add per output for the bias


def bytes_moved(shape, itemsize):
    g = _groups(shape)
    n_in = shape["batch"] * shape["cin"] * math.prod(shape[n] for n in SPATIAL)
    n_out = shape["batch"] * shape["cout"] * math.prod(_out_sizes(shape))
    n_w = shape["cout"] * (shape["cin"] // g) * math.prod(KERNEL) + (shape["cout"] if BIAS else 0)
    return (n_in + n_w + n_out) * itemsize  # input, weight (+ bias) and output, each once
