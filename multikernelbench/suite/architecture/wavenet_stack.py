"""WaveNet residual stack: dilated causal conv, gated tanh*sigmoid activation, 1x1 residual and skip convs; returns the skip sum."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "length": 37},
    {"batch": 3, "channels": 5, "length": 100},
    {"batch": 1, "channels": 16, "length": 19},
]
BENCH_SHAPE = {"batch": 32, "channels": 128, "length": 16384}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 64, "length": 1024}
DILATIONS = (1, 2, 4, 8)
TOLERANCE = {"float32": (3e-4, 3e-4)}  # four gated layers feed each other through the residual path


class Layer(nn.Module):
    def __init__(self, c: int, dilation: int):
        super().__init__()
        self.dilation = dilation
        self.filt = nn.Conv1d(c, 2 * c, 2, dilation=dilation)
        self.res = nn.Conv1d(c, c, 1)
        self.skip = nn.Conv1d(c, c, 1)

    def forward(self, x):
        a, b = self.filt(F.pad(x, (self.dilation, 0))).chunk(2, dim=1)
        z = torch.tanh(a) * torch.sigmoid(b)
        return x + self.res(z), self.skip(z)


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.layers = nn.ModuleList(Layer(channels, d) for d in DILATIONS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = 0
        for layer in self.layers:
            x, s = layer(x)
            total = total + s
        return total


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"])]


# Cost convention: multiply-add = 2 flops; bias, tanh, sigmoid, gate multiply, residual add and skip
# accumulation 1 flop per element. Bytes: input + parameters + output (the skip sum).
def flops(shape):
    b, c, L = shape["batch"], shape["channels"], shape["length"]
    per = b * L * (2 * c * (2 * c * 2 + 1)   # dilated filter+gate conv, k=2, 2c outputs
                   + 3 * c                   # tanh, sigmoid, product
                   + 2 * c * (2 * c + 1)     # residual and skip 1x1 convs
                   + 2 * c)                  # residual add, skip accumulation
    return len(DILATIONS) * per


def bytes_moved(shape, itemsize):
    b, c, L = shape["batch"], shape["channels"], shape["length"]
    params = len(DILATIONS) * ((2 * c * c * 2 + 2 * c) + 2 * (c * c + c))
    return (2 * b * c * L + params) * itemsize
