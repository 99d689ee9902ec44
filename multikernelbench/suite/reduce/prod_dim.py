"""Product over the last dimension of a 2-D tensor whose entries lie near 1."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import uniform

TEST_SHAPES = [
    {"rows": 3, "cols": 37},
    {"rows": 16, "cols": 1000},
    {"rows": 7, "cols": 4099},
]
BENCH_SHAPE = {"rows": 262144, "cols": 4096}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: eager PyTorch already streams the compulsory bytes at the measured "
        "copy bandwidth (eager at 1.03 of the bound); a kernel can match it, not beat it by much. "
        "Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"rows": 2048, "cols": 2048}
# Products of up to 4099 factors: relative rounding grows with the number of factors and the order.
TOLERANCE = {"float32": (1e-4, 1e-3)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=-1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # Factors in [0.96, 1.04]: log of a row product has std ~0.023*sqrt(cols), so products stay finite
    # (within ~e^+-10 at 4096 factors) yet vary clearly from row to row.
    return [uniform(gen, shape["rows"], shape["cols"], low=0.96, high=1.04)]


def flops(shape):
    # one multiply per element
    return shape["rows"] * shape["cols"]


def bytes_moved(shape, itemsize):
    return (shape["rows"] * shape["cols"] + shape["rows"]) * itemsize
