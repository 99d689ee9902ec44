"""Elementwise margin ranking loss max(0, -y * (x1 - x2) + margin) with labels y in {-1, +1}."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.margin_ranking_loss(x1, x2, y, margin=self.margin, reduction="none")


def get_init_inputs(shape):
    return [0.25]


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    y = (randint(gen, 0, 2, b, n) * 2 - 1).to(torch.float32)
    return [randn(gen, b, n), randn(gen, b, n), y]


def flops(shape):
    # subtract, multiply by -y, add margin, max with 0
    return 4 * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    # x1, x2, y (floating labels) in, loss out
    return 4 * shape["batch"] * shape["dim"] * itemsize
