"""Local response normalisation across channels (window 5, alpha 1, beta 0.75, k 1) of a 4-D tensor."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 3, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 37, "height": 19, "width": 23},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 4, "channels": 64, "height": 64, "width": 64}
SIZE = 5


class Model(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        # alpha large enough that the denominator really depends on the neighbourhood.
        self.lrn = nn.LocalResponseNorm(size, alpha=1.0, beta=0.75, k=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lrn(x)


def get_init_inputs(shape):
    return [SIZE]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    # Per element: square 1, window sum over SIZE channels (SIZE adds, zero padding counted),
    # times alpha/size 1, plus k 1, power beta 1, divide 1 = SIZE + 5.
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return (SIZE + 5) * n


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["channels"] * shape["height"] * shape["width"] * itemsize
