"""Elementwise product of [B, 1, N] and [1, M, N] broadcast to a [B, M, N] tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"b": 3, "m": 5, "n": 37},
    {"b": 4, "m": 16, "n": 1000},
    {"b": 2, "m": 3, "n": 4099},
]
BENCH_SHAPE = {"b": 512, "m": 512, "n": 4096}
CPU_BENCH_SHAPE = {"b": 32, "m": 64, "n": 1024}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["b"], 1, shape["n"]), randn(gen, 1, shape["m"], shape["n"])]


def flops(shape):
    return shape["b"] * shape["m"] * shape["n"]


def bytes_moved(shape, itemsize):
    b, m, n = shape["b"], shape["m"], shape["n"]
    return (b * n + m * n + b * m * n) * itemsize
