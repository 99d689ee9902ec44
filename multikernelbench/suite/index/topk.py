"""Values of the 8 largest entries of each row of a 2-D tensor, sorted descending (torch.topk)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 32768, "dim": 32768}
CPU_BENCH_SHAPE = {"batch": 1024, "dim": 8192}
K = 8


class Model(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.topk(x, self.k, dim=-1, largest=True, sorted=True).values


def get_init_inputs(shape):
    return [K]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"])]


def flops(shape):
    # Convention: one comparison per input element (a streaming selection that keeps a K-element
    # heap mostly rejects candidates after one comparison with its minimum).
    return shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return shape["batch"] * (shape["dim"] + K) * itemsize
