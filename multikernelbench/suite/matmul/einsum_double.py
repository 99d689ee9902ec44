"""Double contraction torch.einsum('mjk,jkn->mn'): contract two axes of A (m, j, k) with B (j, k, n)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 17, "j": 3, "k": 11, "n": 33},
    {"m": 64, "j": 8, "k": 16, "n": 37},
    {"m": 9, "j": 5, "k": 100, "n": 65},
]
BENCH_SHAPE = {"m": 8192, "j": 64, "k": 128, "n": 8192}
CPU_BENCH_SHAPE = {"m": 512, "j": 16, "k": 32, "n": 512}
TOLERANCE = {"float32": (1e-3, 1e-3)}  # fp32 accumulation over j*k terms


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.einsum("mjk,jkn->mn", a, b)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    m, j, k, n = shape["m"], shape["j"], shape["k"], shape["n"]
    return [uniform(gen, m, j, k, low=-1.0, high=1.0), uniform(gen, j, k, n, low=-1.0, high=1.0)]


def flops(shape):
    return 2 * shape["m"] * shape["j"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    m, jk, n = shape["m"], shape["j"] * shape["k"], shape["n"]
    return (m * jk + jk * n + m * n) * itemsize
