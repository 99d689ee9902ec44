"""Log-softmax over the last dimension of a 2-D tensor."""

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
# FLOP convention: per element a max-compare, a subtract, an exp, an add into the row sum and the
# final subtract of log(sum) (5); one log per row; transcendentals count 1.
FLOPS_PER_ELEMENT = 5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"], std=2.0)]


def flops(shape):
    return FLOPS_PER_ELEMENT * shape["batch"] * shape["dim"] + shape["batch"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["dim"] * itemsize
