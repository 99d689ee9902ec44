"""RetNet-style multi-scale retention in recurrent form: per-head decayed outer-product state updated in a loop, then output projection."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 32, "heads": 4},
    {"batch": 1, "seq": 33, "dim": 24, "heads": 2},
    {"batch": 3, "seq": 9, "dim": 36, "heads": 3},
]
BENCH_SHAPE = {"batch": 16, "seq": 2048, "dim": 1024, "heads": 8}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "dim": 256, "heads": 4}
TOLERANCE = {"float32": (3e-4, 3e-4)}  # a long decayed recurrence between projections


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        gammas = 1.0 - 2.0 ** (-5.0 - torch.arange(heads).float())
        self.register_buffer("gamma", gammas, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        h, hd = self.heads, d // self.heads
        q = self.q(x).view(b, L, h, hd)
        k = self.k(x).view(b, L, h, hd) / math.sqrt(hd)
        v = self.v(x).view(b, L, h, hd)
        S = x.new_zeros(b, h, hd, hd)
        g = self.gamma[None, :, None, None]
        outs = []
        for t in range(L):
            S = g * S + k[:, t, :, :, None] * v[:, t, :, None, :]
            outs.append((q[:, t, :, None, :] @ S).squeeze(-2))
        return self.o(torch.stack(outs, dim=1).reshape(b, L, d))


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; per step, head and state entry (hd x hd): decay multiply,
# outer-product multiply-add, readout multiply-add = 5 flops; key scaling 1 flop/element.
# Bytes: input + projection weights (+ the per-head decays) + output.
def flops(shape):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    hd = d // h
    return 4 * 2 * b * L * d * d + b * L * d + b * L * h * hd * hd * 5


def bytes_moved(shape, itemsize):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    return (2 * b * L * d + 4 * d * d + h) * itemsize
