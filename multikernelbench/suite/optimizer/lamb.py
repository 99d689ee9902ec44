"""One LAMB step on a single weight matrix: Adam-style direction plus weight decay, scaled by the trust ratio ||p|| / ||u||."""

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
# scalar arithmetic (bias corrections, the two final square roots and the ratio) is free.
# m (3); v (4); m/bc1, v/bc2 (2); sqrt + eps (2); divide (1); + wd*p (2); ||p||^2 and ||u||^2 multiply-adds (4);
# p -= (lr*trust) * u (2)
FLOPS_PER_ELEMENT = 20


class Model(nn.Module):
    def __init__(self, lr: float, beta1: float, beta2: float, eps: float, weight_decay: float, step: int):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.weight_decay, self.step = weight_decay, step

    def forward(self, param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor):
        m = self.beta1 * exp_avg + (1.0 - self.beta1) * grad
        v = self.beta2 * exp_avg_sq + (1.0 - self.beta2) * grad * grad
        m_hat = m / (1.0 - self.beta1 ** self.step)
        v_hat = v / (1.0 - self.beta2 ** self.step)
        update = m_hat / (v_hat.sqrt() + self.eps) + self.weight_decay * param
        p_norm = torch.linalg.vector_norm(param)
        u_norm = torch.linalg.vector_norm(update)
        trust = torch.where((p_norm > 0) & (u_norm > 0), p_norm / u_norm, torch.ones_like(p_norm))
        return param - (self.lr * trust) * update, m, v


def get_init_inputs(shape):
    return [1e-2, 0.9, 0.999, 1e-6, 0.01, 5]


def get_inputs(shape, gen):
    r, c = shape["rows"], shape["cols"]
    return [randn(gen, r, c), randn(gen, r, c, std=0.1), randn(gen, r, c, std=0.05),
            positive(gen, r, c, low=1e-4, high=2e-2)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    # read param, grad, m, v; write param, m, v (the norms need a second pass, not counted as compulsory)
    return 7 * shape["rows"] * shape["cols"] * itemsize
