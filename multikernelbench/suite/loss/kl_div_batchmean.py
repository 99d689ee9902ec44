"""KL divergence KL(target || softmax(logits)) over rows, kl_div(log_softmax(logits), target, 'batchmean')."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import positive, randn

TEST_SHAPES = [
    {"batch": 3, "classes": 37},
    {"batch": 16, "classes": 1000},
    {"batch": 7, "classes": 4099},
]
BENCH_SHAPE = {"batch": 16384, "classes": 32768}
CPU_BENCH_SHAPE = {"batch": 256, "classes": 8192}
# A sum over up to ~65k terms: summation order legitimately moves the result by many ulps.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.kl_div(F.log_softmax(logits, dim=-1), target, reduction="batchmean")


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, c = shape["batch"], shape["classes"]
    t = positive(gen, b, c, low=0.05, high=2.0)
    return [randn(gen, b, c, std=1.5), t / t.sum(dim=-1, keepdim=True)]


def flops(shape):
    # log_softmax: max-compare, subtract, exp, add, subtract log-sum (5); KL term t*(log t - logp): log,
    # subtract, multiply, accumulate (4); one log per row and one final divide
    b, c = shape["batch"], shape["classes"]
    return 9 * b * c + b + 1


def bytes_moved(shape, itemsize):
    b, c = shape["batch"], shape["classes"]
    return (2 * b * c + 1) * itemsize
