"""Matrix multiplication with a very long reduction: (m, k) @ (k, n) with small m, n and huge k."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 8, "k": 16411, "n": 5},
    {"m": 17, "k": 4099, "n": 33},
    {"m": 3, "k": 65537, "n": 2},
]
BENCH_SHAPE = {"m": 256, "k": 4194304, "n": 256}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 1.04 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"m": 64, "k": 65536, "n": 64}
# Reductions of up to 65k terms: fp32 rounding grows with sqrt(k), and a bf16 kernel that splits k
# (split-K) rounds its partial sums differently from the reference.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (5e-2, 5e-2)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return [uniform(gen, m, k, low=-1.0, high=1.0), uniform(gen, k, n, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["m"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    m, k, n = shape["m"], shape["k"], shape["n"]
    return (m * k + k * n + m * n) * itemsize
