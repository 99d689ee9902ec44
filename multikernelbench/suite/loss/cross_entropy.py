"""Cross-entropy of logits [B, C] against int64 class targets [B] (reduction='mean')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"batch": 3, "classes": 37},
    {"batch": 16, "classes": 1000},
    {"batch": 7, "classes": 4099},
]
BENCH_SHAPE = {"batch": 32768, "classes": 32768}
CPU_BENCH_SHAPE = {"batch": 256, "classes": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, target, reduction="mean")


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, c = shape["batch"], shape["classes"]
    return [randn(gen, b, c, std=2.0), randint(gen, 0, c, b)]


def flops(shape):
    # per logit: max-compare, subtract, exp, add (4); per row: log, add max, subtract target logit,
    # accumulate (4); transcendentals count 1
    b, c = shape["batch"], shape["classes"]
    return 4 * b * c + 4 * b


def bytes_moved(shape, itemsize):
    b, c = shape["batch"], shape["classes"]
    return (b * c + 1) * itemsize + 8 * b
