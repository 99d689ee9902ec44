"""Cosine embedding loss of row pairs with labels y in {-1, +1} and a margin (reduction='mean')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

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

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cosine_embedding_loss(x1, x2, y, margin=self.margin, reduction="mean")


def get_init_inputs(shape):
    return [-0.05]


def get_inputs(shape, gen):
    b, d = shape["batch"], shape["dim"]
    x1 = randn(gen, b, d)
    # x2 shares a component with x1 so cosines spread over (0, 1) instead of sitting at ~0.
    x2 = 0.7 * x1 + randn(gen, b, d)
    y = (randint(gen, 0, 2, b) * 2 - 1).to(torch.float32)
    return [x1, x2, y]


def flops(shape):
    # three multiply-add reductions per element (x1.x2, |x1|^2, |x2|^2); per row ~6 ops (sqrt, divide,
    # 1 - cos or max(0, cos - margin), select); one mean
    b, d = shape["batch"], shape["dim"]
    return 6 * b * d + 6 * b + 1


def bytes_moved(shape, itemsize):
    b, d = shape["batch"], shape["dim"]
    return (2 * b * d + b + 1) * itemsize
