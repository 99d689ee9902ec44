"""SwiGLU-style gate: the first half of the last dim times SiLU of the second half."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
# "dim" is the output width; the input is [batch, 2 * dim].
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 8192, "dim": 65536}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 4096}
# FLOP convention: arithmetic ops and transcendentals count 1 each. Per output element:
# sigmoid (negate, exp, +1, divide) = 4, times the gate input = 1, times the value half = 1.
FLOPS_PER_OUTPUT = 6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        return x[..., :d] * torch.nn.functional.silu(x[..., d:])


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], 2 * shape["dim"])]


def flops(shape):
    return FLOPS_PER_OUTPUT * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    # read [batch, 2*dim], write [batch, dim]
    return 3 * shape["batch"] * shape["dim"] * itemsize
