"""Sum over the middle dimension of a 3-D tensor, keeping that dimension."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "reduce": 33, "inner": 17},
    {"batch": 5, "reduce": 128, "inner": 100},
    {"batch": 3, "reduce": 1025, "inner": 7},
]
BENCH_SHAPE = {"batch": 128, "reduce": 4096, "inner": 2048}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: eager PyTorch already streams the compulsory bytes at the measured "
        "copy bandwidth (eager at 0.97 of the bound); a kernel can match it, not beat it by much. "
        "Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 16, "reduce": 512, "inner": 512}
# Sizes a correct kernel must handle (`mkb eval --fresh-shapes` draws from them): key -> (low, high[, multiple]).
SHAPE_RANGES = {"batch": (1, 8), "reduce": (1, 1500), "inner": (1, 128)}
# Sums of up to a few thousand terms of magnitude ~1: fp32 rounding grows with sqrt(n).
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_init_inputs(shape):
    return [1]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["reduce"], shape["inner"], mean=0.5)]


def flops(shape):
    return shape["batch"] * shape["reduce"] * shape["inner"]


def bytes_moved(shape, itemsize):
    return (shape["batch"] * shape["reduce"] * shape["inner"] + shape["batch"] * shape["inner"]) * itemsize
