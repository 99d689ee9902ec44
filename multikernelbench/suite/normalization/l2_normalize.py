"""L2-normalise each row of a 2-D tensor: x / max(||x||_2, eps) along dim 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "dim": 37},
    {"batch": 16, "dim": 1000},
    {"batch": 7, "dim": 4099},
]
BENCH_SHAPE = {"batch": 32768, "dim": 16384}
CPU_BENCH_SHAPE = {"batch": 1024, "dim": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=2.0, dim=1, eps=1e-12)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"], mean=0.2)]


def flops(shape):
    # Per element: square-accumulate 2, divide 1 = 3.  Per row: sqrt, clamp to eps = 2.
    return shape["batch"] * (3 * shape["dim"] + 2)


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["dim"] * itemsize
