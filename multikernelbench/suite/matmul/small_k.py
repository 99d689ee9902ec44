"""Matrix multiplication with a short reduction: (m, k) @ (k, n) with large m, n and small k (output-bound)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"m": 37, "k": 8, "n": 4099},
    {"m": 1000, "k": 3, "n": 257},
    {"m": 129, "k": 16, "n": 65},
]
BENCH_SHAPE = {"m": 32768, "k": 64, "n": 32768}
CPU_BENCH_SHAPE = {"m": 2048, "k": 64, "n": 2048}


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
