"""Sum of absolute errors between predictions and targets (L1 loss, reduction='sum')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}
# A sum of up to ~65k terms: summation order legitimately moves the result by many ulps.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.l1_loss(pred, target, reduction="sum")


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    return [randn(gen, b, n), randn(gen, b, n)]


def flops(shape):
    # subtract, abs, accumulate per element
    return 3 * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return (2 * shape["batch"] * shape["dim"] + 1) * itemsize
