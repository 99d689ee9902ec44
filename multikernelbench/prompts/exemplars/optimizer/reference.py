"""One SGD-with-momentum step: returns the updated parameter and momentum buffer (inputs are not modified)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"n": 37}, {"n": 1000}, {"n": 4099}]
BENCH_SHAPE = {"n": 1 << 28}
CPU_BENCH_SHAPE = {"n": 1 << 21}


class Model(nn.Module):
    def __init__(self, lr: float, momentum: float):
        super().__init__()
        self.lr = lr
        self.momentum = momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor):
        new_buf = self.momentum * buf + grad
        new_param = param - self.lr * new_buf
        return new_param, new_buf


def get_init_inputs(shape):
    return [0.05, 0.9]


def get_inputs(shape, gen):
    n = shape["n"]
    return [randn(gen, n), randn(gen, n), randn(gen, n)]


def flops(shape):
    return 4 * shape["n"]


def bytes_moved(shape, itemsize):
    return 5 * shape["n"] * itemsize
