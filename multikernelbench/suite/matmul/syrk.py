"""Symmetric rank-k product A @ A.T for A of shape (n, k) (the result is symmetric)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"n": 37, "k": 53},
    {"n": 128, "k": 100},
    {"n": 257, "k": 65},
]
BENCH_SHAPE = {"n": 8192, "k": 8192}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 1.00 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
    "bfloat16": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 1.10 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"n": 512, "k": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return a @ a.T


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [uniform(gen, shape["n"], shape["k"], low=-1.0, high=1.0)]


def flops(shape):
    # Counted as the full (n, n) product, 2 n^2 k; a kernel exploiting symmetry does about half.
    return 2 * shape["n"] ** 2 * shape["k"]


def bytes_moved(shape, itemsize):
    n, k = shape["n"], shape["k"]
    return (n * k + n * n) * itemsize
