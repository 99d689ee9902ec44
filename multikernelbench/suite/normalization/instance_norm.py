"""InstanceNorm2d with affine parameters: per-(sample, channel) statistics over H x W."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 1, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 64, "channels": 128, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 32, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True, eps=1e-5)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=1.0, std=2.0)]


def flops(shape):
    # Per element: mean-sum 1, subtract mean 1, square-accumulate 2, scale by rstd 1, affine 2 = 7.
    # Per (sample, channel): mean divide, variance divide, add eps, rsqrt = 4.
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return 7 * n + 4 * shape["batch"] * shape["channels"]


def bytes_moved(shape, itemsize):
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return (2 * n + 2 * shape["channels"]) * itemsize
