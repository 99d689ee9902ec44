"""Class-weighted NLL of log_softmax over the class dim of [B, C, L] logits with int64 targets [B, L]."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [
    {"batch": 2, "classes": 5, "length": 37},
    {"batch": 4, "classes": 19, "length": 1000},
    {"batch": 3, "classes": 37, "length": 129},
]
BENCH_SHAPE = {"batch": 64, "classes": 64, "length": 262144}
CPU_BENCH_SHAPE = {"batch": 8, "classes": 32, "length": 16384}


class Model(nn.Module):
    def __init__(self, classes: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(classes) + 0.5)

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(F.log_softmax(logits, dim=1), target, weight=self.weight, reduction="mean")


def get_init_inputs(shape):
    return [shape["classes"]]


def get_inputs(shape, gen):
    b, c, n = shape["batch"], shape["classes"], shape["length"]
    return [randn(gen, b, c, n, std=2.0), randint(gen, 0, c, b, n)]


def flops(shape):
    # per logit: max-compare, subtract, exp, add (4); per position: log, subtract, weight multiply, two
    # accumulations (numerator, weight sum) (5); one final divide
    b, c, n = shape["batch"], shape["classes"], shape["length"]
    return 4 * b * c * n + 5 * b * n + 1


def bytes_moved(shape, itemsize):
    b, c, n = shape["batch"], shape["classes"], shape["length"]
    return (b * c * n + c + 1) * itemsize + 8 * b * n
