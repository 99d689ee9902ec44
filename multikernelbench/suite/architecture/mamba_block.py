"""Mamba block: input projection, causal depthwise conv + SiLU, data-dependent (dt, B, C), selective scan loop, SiLU gate, output projection."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 16, "state": 4},
    {"batch": 1, "seq": 33, "dim": 12, "state": 8},
    {"batch": 3, "seq": 9, "dim": 20, "state": 16},
]
BENCH_SHAPE = {"batch": 8, "seq": 2048, "dim": 1024, "state": 16}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 64, "dim": 128, "state": 16}
EXPAND, CONV = 2, 4


def _rank(dim):
    return math.ceil(dim / 16)


class Model(nn.Module):
    def __init__(self, dim: int, state: int):
        super().__init__()
        di, r = EXPAND * dim, _rank(dim)
        self.in_proj = nn.Linear(dim, 2 * di, bias=False)
        self.conv = nn.Conv1d(di, di, CONV, groups=di)
        self.x_proj = nn.Linear(di, r + 2 * state, bias=False)
        self.dt_proj = nn.Linear(r, di)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, state + 1).float()).repeat(di, 1))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, dim, bias=False)
        self.r, self.n = r, state

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, _ = x.shape
        u, z = self.in_proj(x).chunk(2, dim=-1)
        u = F.silu(self.conv(F.pad(u.transpose(1, 2), (CONV - 1, 0))).transpose(1, 2))
        dt, Bs, Cs = self.x_proj(u).split([self.r, self.n, self.n], dim=-1)
        dt = F.softplus(self.dt_proj(dt))
        A = -torch.exp(self.A_log)
        h = u.new_zeros(b, u.shape[-1], self.n)
        ys = []
        for t in range(L):
            d_t = dt[:, t, :, None]
            h = torch.exp(d_t * A) * h + (d_t * u[:, t, :, None]) * Bs[:, t, None, :]
            ys.append((h * Cs[:, t, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + self.D * u
        return self.out_proj(y * F.silu(z))


def get_init_inputs(shape):
    return [shape["dim"], shape["state"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, SiLU, softplus, exp, gate multiply 1 flop/element.
# Scan per step and (channel, state) 7 flops, per step and channel 2 (skip) — see mamba_selective_scan.
# Bytes: input + parameters + output.
def flops(shape):
    b, L, d, n = shape["batch"], shape["seq"], shape["dim"], shape["state"]
    di, r = EXPAND * d, _rank(d)
    t = b * L
    f = 2 * t * d * 2 * di                              # in_proj
    f += t * di * (2 * CONV + 2)                        # conv + bias + SiLU
    f += 2 * t * di * (r + 2 * n)                       # x_proj
    f += t * di * (2 * r + 2)                           # dt_proj + bias + softplus
    f += t * di * (7 * n + 2)                           # scan + skip
    f += t * di * 2                                     # SiLU(z) and gate
    f += 2 * t * di * d                                 # out_proj
    return f


def bytes_moved(shape, itemsize):
    b, L, d, n = shape["batch"], shape["seq"], shape["dim"], shape["state"]
    di, r = EXPAND * d, _rank(d)
    params = d * 2 * di + (di * CONV + di) + di * (r + 2 * n) + (r * di + di) + di * n + di + di * d
    return (2 * b * L * d + params) * itemsize
