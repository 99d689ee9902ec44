"""Binary cross-entropy with logits, soft targets and a learned per-column pos_weight (reduction='mean')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn, uniform

TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 4096, "dim": 131072}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}
# A mean over up to ~65k terms: summation order legitimately moves the result by many ulps.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.pos_weight = nn.Parameter(torch.rand(dim) * 2.0 + 0.5)

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, target, pos_weight=self.pos_weight, reduction="mean")


def get_init_inputs(shape):
    return [shape["dim"]]


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["dim"]
    return [randn(gen, b, n, std=2.0), uniform(gen, b, n)]


def flops(shape):
    # per element: (1 - y) * x (2), log-weight 1 + (pw - 1) * y (3), softplus(-x) stably as
    # log1p(exp(-|x|)) + max(-x, 0) (5), multiply, add, accumulate (3) = 13; one final divide
    return 13 * shape["batch"] * shape["dim"] + 1


def bytes_moved(shape, itemsize):
    b, n = shape["batch"], shape["dim"]
    return (2 * b * n + n + 1) * itemsize
