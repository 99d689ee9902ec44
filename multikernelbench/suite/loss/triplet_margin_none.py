"""Per-row triplet margin loss max(d(a, p) - d(a, n) + margin, 0) with L2 distances (reduction='none')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 5, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 131072, "dim": 4096}
CPU_BENCH_SHAPE = {"batch": 512, "dim": 2048}


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=2.0, reduction="none")


def get_init_inputs(shape):
    return [0.5]


def get_inputs(shape, gen):
    b, d = shape["batch"], shape["dim"]
    # Independent draws: d(a, p) - d(a, n) is ~N(0, ~1) whatever the width, so with margin 0.5 the hinge is
    # active for some rows and zero for others.
    return [randn(gen, b, d), randn(gen, b, d), randn(gen, b, d)]


def flops(shape):
    # per element and distance: subtract, add eps, multiply-add (4), two distances; per row: 2 sqrt,
    # subtract, add margin, max
    b, d = shape["batch"], shape["dim"]
    return 8 * b * d + 5 * b


def bytes_moved(shape, itemsize):
    b, d = shape["batch"], shape["dim"]
    return (3 * b * d + b) * itemsize
