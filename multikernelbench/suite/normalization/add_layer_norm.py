"""Residual add followed by LayerNorm over the last dimension: LayerNorm(x + residual) with learned affine."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"tokens": 3, "hidden": 37},
    {"tokens": 33, "hidden": 1000},
    {"tokens": 5, "hidden": 4099},
]
BENCH_SHAPE = {"tokens": 65536, "hidden": 8192}
CPU_BENCH_SHAPE = {"tokens": 1024, "hidden": 4096}


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.ln(x + residual)


def get_init_inputs(shape):
    return [shape["hidden"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["tokens"], shape["hidden"]), randn(gen, shape["tokens"], shape["hidden"], mean=0.5)]


def flops(shape):
    # Per element: residual add 1, mean-sum 1, subtract mean 1, square-accumulate 2, scale 1, affine 2 = 8.
    # Per row: mean divide, variance divide, add eps, rsqrt = 4.
    return shape["tokens"] * (8 * shape["hidden"] + 4)


def bytes_moved(shape, itemsize):
    return (3 * shape["tokens"] * shape["hidden"] + 2 * shape["hidden"]) * itemsize
