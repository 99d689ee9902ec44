"""RMSNorm over the last dimension of a 3-D (batch, seq, hidden) tensor with a learned weight."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 5, "hidden": 37},
    {"batch": 3, "seq": 17, "hidden": 1000},
    {"batch": 1, "seq": 7, "hidden": 4099},
]
BENCH_SHAPE = {"batch": 32, "seq": 4096, "hidden": 4096}
CPU_BENCH_SHAPE = {"batch": 4, "seq": 256, "hidden": 4096}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 4), "seq": (1, 24), "hidden": (1, 5000)}


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def get_init_inputs(shape):
    return [shape["hidden"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["hidden"], mean=0.2)]


def flops(shape):
    # Per element: square-accumulate 2, scale by rstd 1, weight multiply 1 = 4.
    # Per row: mean divide, add eps, rsqrt = 3.
    rows = shape["batch"] * shape["seq"]
    return rows * (4 * shape["hidden"] + 3)


def bytes_moved(shape, itemsize):
    rows = shape["batch"] * shape["seq"]
    return (2 * rows * shape["hidden"] + shape["hidden"]) * itemsize
