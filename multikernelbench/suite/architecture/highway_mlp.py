"""Highway network: four layers of y = T(x) * relu(W_h x) + (1 - T(x)) * x with sigmoid transform gates."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 64},
    {"batch": 7, "dim": 17},
]
BENCH_SHAPE = {"batch": 16384, "dim": 2048}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 0.90 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 512}
LAYERS = 4
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # eight matmuls across four chained layers


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.h = nn.ModuleList(nn.Linear(dim, dim) for _ in range(LAYERS))
        self.t = nn.ModuleList(nn.Linear(dim, dim) for _ in range(LAYERS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for h, t in zip(self.h, self.t):
            g = torch.sigmoid(t(x))
            x = g * F.relu(h(x)) + (1 - g) * x
        return x


def get_init_inputs(shape):
    return [shape["dim"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, ReLU, sigmoid and the 4-op gated mix
# (g*h, 1-g, (1-g)*x, add) 1 flop per element each. Bytes: input + parameters + output.
def flops(shape):
    b, d = shape["batch"], shape["dim"]
    return LAYERS * b * d * (2 * (2 * d + 1) + 2 + 4)


def bytes_moved(shape, itemsize):
    b, d = shape["batch"], shape["dim"]
    return (2 * b * d + LAYERS * 2 * (d * d + d)) * itemsize
