"""Divide an NCHW tensor by a strictly positive per-channel tensor of shape [1, C, 1, 1]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import positive, randn

TEST_SHAPES = [
    {"n": 2, "c": 3, "h": 7, "w": 9},
    {"n": 4, "c": 16, "h": 25, "w": 25},
    {"n": 1, "c": 5, "h": 37, "w": 101},
]
BENCH_SHAPE = {"n": 64, "c": 256, "h": 128, "w": 256}
CPU_BENCH_SHAPE = {"n": 8, "c": 32, "h": 64, "w": 128}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        return x / d


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["n"], shape["c"], shape["h"], shape["w"]),
            positive(gen, 1, shape["c"], 1, 1, low=0.25, high=4.0)]


def flops(shape):
    return shape["n"] * shape["c"] * shape["h"] * shape["w"]


def bytes_moved(shape, itemsize):
    numel = shape["n"] * shape["c"] * shape["h"] * shape["w"]
    return (2 * numel + shape["c"]) * itemsize
