"""One Adagrad step with L2 weight decay: returns (new param, new sum of squared gradients)."""

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
# FLOP convention (all optimizer tasks): every elementwise add/sub/mul/div/sqrt counts 1 per element.
# g += wd*p (2); s += g*g (2); sqrt(s) + eps (2); g / that (1); p -= lr * that (2)
FLOPS_PER_ELEMENT = 9


class Model(nn.Module):
    def __init__(self, lr: float, eps: float, weight_decay: float):
        super().__init__()
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, state_sum: torch.Tensor):
        g = grad + self.weight_decay * param
        s = state_sum + g * g
        return param - self.lr * (g / (s.sqrt() + self.eps)), s


def get_init_inputs(shape):
    return [5e-2, 1e-10, 1e-3]


def get_inputs(shape, gen):
    r, c = shape["rows"], shape["cols"]
    return [randn(gen, r, c), randn(gen, r, c, std=0.2), positive(gen, r, c, low=1e-2, high=0.5)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    # read param, grad, state_sum; write param, state_sum
    return 5 * shape["rows"] * shape["cols"] * itemsize
