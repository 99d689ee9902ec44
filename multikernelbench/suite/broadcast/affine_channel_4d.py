"""Per-channel affine transform of an NCHW tensor with learned gamma and beta of shape [C, 1, 1]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"n": 2, "c": 3, "h": 7, "w": 9},
    {"n": 4, "c": 16, "h": 25, "w": 25},
    {"n": 1, "c": 5, "h": 37, "w": 101},
]
BENCH_SHAPE = {"n": 64, "c": 256, "h": 128, "w": 256}
CPU_BENCH_SHAPE = {"n": 8, "c": 32, "h": 64, "w": 128}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.gamma = nn.Parameter(torch.randn(channels, 1, 1) * 0.5 + 1.0)
        self.beta = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma + self.beta


def get_init_inputs(shape):
    return [shape["c"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["n"], shape["c"], shape["h"], shape["w"])]


def flops(shape):
    # multiply-add per element
    return 2 * shape["n"] * shape["c"] * shape["h"] * shape["w"]


def bytes_moved(shape, itemsize):
    numel = shape["n"] * shape["c"] * shape["h"] * shape["w"]
    return (2 * numel + 2 * shape["c"]) * itemsize
