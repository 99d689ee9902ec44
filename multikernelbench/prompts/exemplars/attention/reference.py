"""Single-head scaled dot-product attention softmax(Q K^T / sqrt(d)) V without masking, batched."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 2, "seq": 7, "dim": 16}, {"batch": 1, "seq": 65, "dim": 32},
               {"batch": 3, "seq": 100, "dim": 64}]
BENCH_SHAPE = {"batch": 64, "seq": 4096, "dim": 64}
CPU_BENCH_SHAPE = {"batch": 4, "seq": 512, "dim": 64}
# Softmax-weighted sums over up to ~100 keys: rounding depends on the accumulation order.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        return torch.softmax(scores, dim=-1) @ v


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, s, d = shape["batch"], shape["seq"], shape["dim"]
    return [randn(gen, b, s, d), randn(gen, b, s, d), randn(gen, b, s, d)]


def flops(shape):
    return 4 * shape["batch"] * shape["seq"] * shape["seq"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return 4 * shape["batch"] * shape["seq"] * shape["dim"] * itemsize
