"""BatchNorm2d with training-mode statistics: per-channel mean/variance over (N, H, W) of the batch, then affine."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 5, "channels": 37, "height": 8, "width": 9},
    {"batch": 3, "channels": 16, "height": 31, "width": 29},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(channels).uniform_(0.5, 1.5))
        self.bias = nn.Parameter(torch.empty(channels).uniform_(-0.5, 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # training=True with no running buffers: batch statistics (biased variance) always,
        # regardless of the module's train/eval flag.
        return F.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=1e-5)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=0.7, std=2.0)]


def flops(shape):
    # Per element: mean-sum 1, subtract mean 1, square-accumulate 2, scale by rstd 1, affine 2 = 7.
    # Per channel: mean divide, variance divide, add eps, rsqrt = 4.
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return 7 * n + 4 * shape["channels"]


def bytes_moved(shape, itemsize):
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return (2 * n + 2 * shape["channels"]) * itemsize
