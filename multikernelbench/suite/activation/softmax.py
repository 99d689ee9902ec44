"""Softmax over the last dimension of a 2-D tensor (rows of logits)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 32768, "dim": 16384}
CPU_BENCH_SHAPE = {"batch": 256, "dim": 8192}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 24), "dim": (2, 5000)}
# Outputs are probabilities of order 1/dim, far below the default bf16 atol (0.02, which would accept an all-zero
# answer); a tighter atol with the usual bf16 rtol still covers one or two bf16 roundings.
TOLERANCE = {"bfloat16": (1e-5, 2e-2)}  # outputs are ~1/dim: atol must sit well below them
# FLOP convention: per element a max-compare, a subtract, an exp, an add into the row sum and a
# divide (5); transcendentals count 1.
FLOPS_PER_ELEMENT = 5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # std 2 gives rows with a few dominant entries, far from a uniform distribution.
    return [randn(gen, shape["batch"], shape["dim"], std=2.0)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["batch"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["dim"] * itemsize
