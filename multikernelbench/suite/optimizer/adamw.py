"""One AdamW step (decoupled weight decay, bias-corrected): returns (new param, exp_avg, exp_avg_sq)."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import positive, randn

TEST_SHAPES = [
    {"rows": 3, "cols": 37},
    {"rows": 16, "cols": 1000},
    {"rows": 7, "cols": 4099},
]
BENCH_SHAPE = {"rows": 16384, "cols": 16384}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}
# FLOP convention (all optimizer tasks): every elementwise add/sub/mul/div/sqrt counts 1 per element;
# scalar hyperparameter arithmetic (bias corrections, 1 - lr*wd) is free.
# p *= (1 - lr*wd) (1); m (3); v (4); sqrt(v)/sqrt(bc2) + eps (3); m/denom (1); p -= (lr/bc1) * that (2)
FLOPS_PER_ELEMENT = 14


class Model(nn.Module):
    def __init__(self, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, step: int):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.weight_decay, self.step = weight_decay, step

    def forward(self, param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor):
        p = param * (1.0 - self.lr * self.weight_decay)
        m = self.beta1 * exp_avg + (1.0 - self.beta1) * grad
        v = self.beta2 * exp_avg_sq + (1.0 - self.beta2) * grad * grad
        bc1 = 1.0 - self.beta1 ** self.step
        bc2 = 1.0 - self.beta2 ** self.step
        denom = v.sqrt() / math.sqrt(bc2) + self.eps
        return p - (self.lr / bc1) * (m / denom), m, v


def get_init_inputs(shape):
    return [2e-2, 0.9, 0.95, 1e-8, 0.1, 3]


def get_inputs(shape, gen):
    r, c = shape["rows"], shape["cols"]
    return [randn(gen, r, c), randn(gen, r, c, std=0.1), randn(gen, r, c, std=0.05),
            positive(gen, r, c, low=1e-4, high=2e-2)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    # read param, grad, m, v; write param, m, v
    return 7 * shape["rows"] * shape["cols"] * itemsize
