"""LayerNorm without affine parameters over all non-batch dimensions (C, H, W) of a 4-D tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 16, "height": 9, "width": 7},
    {"batch": 3, "channels": 5, "height": 37, "width": 41},
]
BENCH_SHAPE = {"batch": 128, "channels": 64, "height": 256, "width": 256}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 32, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[1:], eps=1e-5)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=-0.5, std=1.5)]


def flops(shape):
    # Per element: mean-sum 1, subtract mean 1, square-accumulate 2, scale by rstd 1 = 5.
    # Per sample: mean divide, variance divide, add eps, rsqrt = 4.
    n = shape["channels"] * shape["height"] * shape["width"]
    return shape["batch"] * (5 * n + 4)


def bytes_moved(shape, itemsize):
    return 2 * shape["batch"] * shape["channels"] * shape["height"] * shape["width"] * itemsize
