"""S4D layer without FFT: the SSM convolution kernel is built by a power recurrence over complex diagonal modes, then applied as a causal depthwise conv."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 8, "length": 17, "state": 4},
    {"batch": 3, "channels": 5, "length": 33, "state": 8},
    {"batch": 1, "channels": 12, "length": 37, "state": 3},
]
BENCH_SHAPE = {"batch": 16, "channels": 512, "length": 4096, "state": 32}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 64, "length": 512, "state": 32}
TOLERANCE = {"float32": (3e-4, 3e-4)}  # causal convolution sums up to `length` terms


class Model(nn.Module):
    def __init__(self, channels: int, state: int):
        super().__init__()
        h, n = channels, state
        self.log_dt = nn.Parameter(torch.empty(h).uniform_(math.log(1e-3), math.log(1e-1)))
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(h, n)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(n).float().repeat(h, 1))
        self.C_re = nn.Parameter(torch.randn(h, n) * 0.5)
        self.C_im = nn.Parameter(torch.randn(h, n) * 0.5)
        self.D = nn.Parameter(torch.randn(h))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        # u: (b, h, L)
        L = u.shape[-1]
        dt = torch.exp(self.log_dt.float())[:, None]
        A = torch.complex(-torch.exp(self.log_A_real.float()), self.A_imag.float())
        dA = torch.exp(dt * A)
        Ct = torch.complex(self.C_re.float(), self.C_im.float()) * (dA - 1.0) / A  # ZOH input matrix folded into C
        p = torch.ones_like(dA)
        taps = []
        for _ in range(L):
            taps.append(2 * (Ct * p).sum(-1).real)
            p = p * dA
        K = torch.stack(taps, dim=-1).to(u.dtype)                  # (h, L)
        y = F.conv1d(F.pad(u, (L - 1, 0)), K.flip(-1)[:, None, :], groups=u.shape[1])
        return y + self.D[:, None] * u


def get_init_inputs(shape):
    return [shape["channels"], shape["state"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"])]


# Cost convention: multiply-add = 2 flops; a complex multiply is 6 flops, a complex add 2. Kernel
# recurrence per (channel, state, step): C*p (6), sum (2), p*dA (6) = 14; discretisation ~20 flops per
# (channel, state). The causal conv counts every tap of the left-padded full-length kernel (2 flops),
# as the reference computes it; skip 2 flops per element. Bytes: u + parameters + y.
def flops(shape):
    b, h, L, n = shape["batch"], shape["channels"], shape["length"], shape["state"]
    return h * n * (14 * L + 20) + 2 * b * h * L * L + 2 * b * h * L


def bytes_moved(shape, itemsize):
    b, h, L, n = shape["batch"], shape["channels"], shape["length"], shape["state"]
    return (2 * b * h * L + 2 * h + 4 * h * n) * itemsize
