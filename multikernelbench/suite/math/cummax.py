"""Running maximum (values of torch.cummax) along the last dimension of a 2-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 3, "length": 37},
    {"batch": 16, "length": 1000},
    {"batch": 5, "length": 4099},
]
BENCH_SHAPE = {"batch": 65536, "length": 8192}
CPU_BENCH_SHAPE = {"batch": 256, "length": 8192}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cummax(x, dim=-1).values


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # A slow upward drift keeps the running maximum changing along the whole row, not just at the start.
    length = shape["length"]
    drift = torch.arange(length, device=gen.device, dtype=torch.float32) * (4.0 / length)
    return [randn(gen, shape["batch"], length) + drift]


def flops(shape):
    # one comparison per element
    return shape["batch"] * shape["length"]


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["length"] * itemsize
