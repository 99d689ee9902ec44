"""GroupNorm of a 4-D (N, C, H, W) tensor with learned per-channel weight and bias."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 6, "groups": 3, "height": 17, "width": 33},
    {"batch": 3, "channels": 32, "groups": 8, "height": 9, "width": 7},
    {"batch": 1, "channels": 20, "groups": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "groups": 32, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "groups": 8, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels, eps=1e-5)
        nn.init.uniform_(self.gn.weight, 0.5, 1.5)
        nn.init.uniform_(self.gn.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_init_inputs(shape):
    return [shape["groups"], shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=0.4, std=1.5)]


def flops(shape):
    # Per element: mean-sum 1, subtract mean 1, square-accumulate 2, scale by rstd 1, affine 2 = 7.
    # Per (sample, group): mean divide, variance divide, add eps, rsqrt = 4.
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return 7 * n + 4 * shape["batch"] * shape["groups"]


def bytes_moved(shape, itemsize):
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return (2 * n + 2 * shape["channels"]) * itemsize
