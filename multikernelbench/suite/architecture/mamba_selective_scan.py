"""Mamba selective scan in plain PyTorch: input-dependent step sizes, B and C; discretised diagonal SSM scanned in a loop."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "channels": 8, "state": 4},
    {"batch": 3, "seq": 33, "channels": 5, "state": 16},
    {"batch": 1, "seq": 9, "channels": 37, "state": 8},
]
BENCH_SHAPE = {"batch": 64, "seq": 2048, "channels": 2048, "state": 16}
CPU_BENCH_SHAPE = {"batch": 4, "seq": 128, "channels": 256, "state": 16}


class Model(nn.Module):
    def __init__(self, channels: int, state: int):
        super().__init__()
        # S4D-real initialisation A = -(1..N), stored as a log.
        self.A_log = nn.Parameter(torch.log(torch.arange(1, state + 1).float()).repeat(channels, 1))
        self.D = nn.Parameter(torch.ones(channels))
        self.dt_bias = nn.Parameter(torch.randn(channels) * 0.5 - 2.0)

    def forward(self, u, delta, Bs, Cs):
        # u, delta: (b, L, d); Bs, Cs: (b, L, n)
        b, L, d = u.shape
        A = -torch.exp(self.A_log)                                  # (d, n)
        delta = F.softplus(delta + self.dt_bias)
        h = u.new_zeros(b, d, A.shape[1])
        ys = []
        for t in range(L):
            dt = delta[:, t, :, None]
            h = torch.exp(dt * A) * h + (dt * u[:, t, :, None]) * Bs[:, t, None, :]
            ys.append((h * Cs[:, t, None, :]).sum(-1))
        return torch.stack(ys, dim=1) + self.D * u


def get_init_inputs(shape):
    return [shape["channels"], shape["state"]]


def get_inputs(shape, gen):
    b, L, d, n = shape["batch"], shape["seq"], shape["channels"], shape["state"]
    return [randn(gen, b, L, d), randn(gen, b, L, d), randn(gen, b, L, n), randn(gen, b, L, n)]


# Cost convention: multiply-add = 2 flops, exp/softplus 1 flop; per step and (channel, state):
# dt*A, exp, decay multiply, (dt*u)*B, add, readout multiply-add = 7 flops; per step and channel: dt*u,
# bias add, softplus, skip multiply-add = 5 flops. Bytes: u, delta, B, C, parameters, y.
def flops(shape):
    b, L, d, n = shape["batch"], shape["seq"], shape["channels"], shape["state"]
    return b * L * d * (7 * n + 5) + 2 * d * n


def bytes_moved(shape, itemsize):
    b, L, d, n = shape["batch"], shape["seq"], shape["channels"], shape["state"]
    return (3 * b * L * d + 2 * b * L * n + d * n + 2 * d) * itemsize
