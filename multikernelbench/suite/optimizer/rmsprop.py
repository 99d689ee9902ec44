"""One RMSprop step with momentum (not centred): returns (new param, square_avg, momentum buffer)."""

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
# v = a*v + (1-a)*g*g (4); sqrt(v) + eps (2); buf = mu*buf + g/avg (3); p -= lr*buf (2)
FLOPS_PER_ELEMENT = 11


class Model(nn.Module):
    def __init__(self, lr: float, alpha: float, eps: float, momentum: float):
        super().__init__()
        self.lr, self.alpha, self.eps, self.momentum = lr, alpha, eps, momentum

    def forward(self, param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor,
                momentum_buffer: torch.Tensor):
        v = self.alpha * square_avg + (1.0 - self.alpha) * grad * grad
        avg = v.sqrt() + self.eps
        buf = self.momentum * momentum_buffer + grad / avg
        return param - self.lr * buf, v, buf


def get_init_inputs(shape):
    return [1e-2, 0.99, 1e-8, 0.9]


def get_inputs(shape, gen):
    r, c = shape["rows"], shape["cols"]
    return [randn(gen, r, c), randn(gen, r, c, std=0.1), positive(gen, r, c, low=1e-3, high=2e-2),
            randn(gen, r, c, std=0.5)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    # read param, grad, square_avg, buffer; write param, square_avg, buffer
    return 7 * shape["rows"] * shape["cols"] * itemsize
