"""Scalar-decay selective SSM (Mamba-2 SSD) in its quadratic form: cumulative-sum segment decays, masked (C B^T) mixing, skip."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "heads": 3, "head_dim": 8, "state": 4},
    {"batch": 1, "seq": 33, "heads": 2, "head_dim": 5, "state": 16},
    {"batch": 3, "seq": 9, "heads": 4, "head_dim": 12, "state": 8},
]
BENCH_SHAPE = {"batch": 16, "seq": 1024, "heads": 32, "head_dim": 64, "state": 128}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "heads": 8, "head_dim": 32, "state": 32}
TOLERANCE = {"float32": (2e-4, 2e-4)}  # sums of up to seq terms with exponentiated cumulative sums


class Model(nn.Module):
    def __init__(self, heads: int):
        super().__init__()
        self.A_log = nn.Parameter(torch.empty(heads).uniform_(-1.0, 1.0))
        self.dt_bias = nn.Parameter(torch.randn(heads) * 0.5)
        self.D = nn.Parameter(torch.randn(heads))

    def forward(self, x, dt, Bm, Cm):
        # x: (b, L, h, p); dt: (b, L, h); Bm, Cm: (b, L, n)
        L = x.shape[1]
        dt = F.softplus(dt + self.dt_bias)
        a = -torch.exp(self.A_log) * dt                           # log decay per step, (b, L, h)
        cs = torch.cumsum(a, dim=1).transpose(1, 2)               # (b, h, L)
        seg = cs[:, :, :, None] - cs[:, :, None, :]               # sum of log decays over (j, i]
        causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
        decay = torch.exp(seg.masked_fill(~causal, float("-inf")))
        scores = (Cm @ Bm.transpose(1, 2))[:, None] * decay       # (b, h, L, L)
        xdt = (x * dt[..., None]).transpose(1, 2)                 # (b, h, L, p)
        y = (scores @ xdt).transpose(1, 2)
        return y + self.D[:, None] * x


def get_init_inputs(shape):
    return [shape["heads"]]


def get_inputs(shape, gen):
    b, L, h, p, n = (shape[k] for k in ("batch", "seq", "heads", "head_dim", "state"))
    return [randn(gen, b, L, h, p), randn(gen, b, L, h, mean=-1.0), randn(gen, b, L, n, std=0.5),
            randn(gen, b, L, n, std=0.5)]


# Cost convention: multiply-add = 2 flops; softplus, exp and other elementwise ops 1 flop each; per
# (b, h, i, j) score: difference, mask, exp, product with C.B = 4 flops, over the full L x L square as
# the reference computes it. Bytes: x, dt, B, C, parameters and y.
def flops(shape):
    b, L, h, p, n = (shape[k] for k in ("batch", "seq", "heads", "head_dim", "state"))
    f = b * L * h * 4                           # bias add, softplus, A*dt (with exp(A_log) per head), cumsum
    f += 2 * b * L * L * n                      # C B^T
    f += 4 * b * h * L * L                      # decay and scores
    f += b * L * h * p                          # x * dt
    f += 2 * b * h * L * L * p                  # scores @ x
    f += 2 * b * L * h * p                      # skip
    return f


def bytes_moved(shape, itemsize):
    b, L, h, p, n = (shape[k] for k in ("batch", "seq", "heads", "head_dim", "state"))
    return (2 * b * L * h * p + b * L * h + 2 * b * L * n + 3 * h) * itemsize
