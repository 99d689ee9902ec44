"""Diagonal linear state-space layer (real decays per channel and state) scanned step by step in a Python loop, with skip term."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "channels": 8, "state": 4},
    {"batch": 3, "seq": 33, "channels": 5, "state": 16},
    {"batch": 1, "seq": 9, "channels": 37, "state": 3},
]
BENCH_SHAPE = {"batch": 64, "seq": 4096, "channels": 2048, "state": 16}
CPU_BENCH_SHAPE = {"batch": 4, "seq": 128, "channels": 256, "state": 16}


class Model(nn.Module):
    def __init__(self, channels: int, state: int):
        super().__init__()
        # Decays a = exp(-exp(log_rate)) spread over (0.37, 0.99): short and long memories.
        self.log_rate = nn.Parameter(torch.empty(channels, state).uniform_(-4.6, 0.0))
        self.B = nn.Parameter(torch.randn(channels, state) * 0.5)
        self.C = nn.Parameter(torch.randn(channels, state) * 0.5)
        self.D = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        a = torch.exp(-torch.exp(self.log_rate))
        h = x.new_zeros(b, d, a.shape[1])
        ys = []
        for t in range(L):
            xt = x[:, t]
            h = a * h + self.B * xt[:, :, None]
            ys.append((h * self.C).sum(-1) + self.D * xt)
        return torch.stack(ys, dim=1)


def get_init_inputs(shape):
    return [shape["channels"], shape["state"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["channels"])]


# Cost convention: multiply-add = 2 flops; per step and (channel, state): decay multiply, input
# multiply-add, readout multiply-add = 5 flops; per step and channel: skip multiply-add = 2; computing
# the decays 2 flops per (channel, state). Bytes: x + parameters + y.
def flops(shape):
    b, L, d, n = shape["batch"], shape["seq"], shape["channels"], shape["state"]
    return b * L * d * (5 * n + 2) + 2 * d * n


def bytes_moved(shape, itemsize):
    b, L, d, n = shape["batch"], shape["seq"], shape["channels"], shape["state"]
    return (2 * b * L * d + 3 * d * n + d) * itemsize
