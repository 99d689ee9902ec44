"""One SGD step with weight decay and Nesterov momentum: returns (new param, new momentum buffer)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"rows": 3, "cols": 37},
    {"rows": 16, "cols": 1000},
    {"rows": 7, "cols": 4099},
]
BENCH_SHAPE = {"rows": 16384, "cols": 16384}
CPU_BENCH_SHAPE = {"rows": 512, "cols": 4096}
# FLOP convention (all optimizer tasks): every elementwise add/sub/mul/div/sqrt counts 1 per element;
# scalar hyperparameter arithmetic is free.
FLOPS_PER_ELEMENT = 9  # g += wd*p (2), buf = mu*buf + (1-damp)*g (3), d = g + mu*buf (2), p -= lr*d (2)


class Model(nn.Module):
    def __init__(self, lr: float, momentum: float, dampening: float, weight_decay: float):
        super().__init__()
        self.lr, self.momentum, self.dampening, self.weight_decay = lr, momentum, dampening, weight_decay

    def forward(self, param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor):
        g = grad + self.weight_decay * param
        buf = self.momentum * momentum_buffer + (1.0 - self.dampening) * g
        step = g + self.momentum * buf  # Nesterov
        return param - self.lr * step, buf


def get_init_inputs(shape):
    return [0.05, 0.9, 0.1, 1e-2]


def get_inputs(shape, gen):
    r, c = shape["rows"], shape["cols"]
    return [randn(gen, r, c), randn(gen, r, c, std=0.5), randn(gen, r, c, std=0.3)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    # read param, grad, buffer; write param, buffer
    return 5 * shape["rows"] * shape["cols"] * itemsize
