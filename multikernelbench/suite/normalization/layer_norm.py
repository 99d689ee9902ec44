"""LayerNorm over the last dimension of a 2-D tensor with learned (randomly initialised) weight and bias."""

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
CPU_BENCH_SHAPE = {"batch": 1024, "dim": 4096}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 24), "dim": (2, 5000)}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=1e-5)
        # Non-trivial affine parameters, so a kernel that ignores them is caught.
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_init_inputs(shape):
    return [shape["dim"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["dim"], mean=0.3, std=2.0)]


def flops(shape):
    # Per element: mean-sum 1, subtract mean 1, square-accumulate 2, scale by rstd 1, affine 2 = 7.
    # Per row: mean divide, variance divide, add eps, rsqrt = 4.
    return shape["batch"] * (7 * shape["dim"] + 4)


def bytes_moved(shape, itemsize):
    return (2 * shape["batch"] * shape["dim"] + 2 * shape["dim"]) * itemsize
