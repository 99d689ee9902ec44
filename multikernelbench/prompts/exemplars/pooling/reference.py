"""1-D max pooling (kernel 3, stride 2, no padding) over the last dimension of a (batch, channels, length) tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 2, "channels": 3, "length": 37}, {"batch": 4, "channels": 8, "length": 130},
               {"batch": 1, "channels": 5, "length": 1001}]
BENCH_SHAPE = {"batch": 64, "channels": 256, "length": 65536}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "length": 4096}


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool1d(x, self.kernel_size, self.stride)


def get_init_inputs(shape):
    return [3, 2]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["length"])]


def _out_len(shape):
    return (shape["length"] - 3) // 2 + 1


def flops(shape):
    return 2 * shape["batch"] * shape["channels"] * _out_len(shape)


def bytes_moved(shape, itemsize):
    return shape["batch"] * shape["channels"] * (shape["length"] + _out_len(shape)) * itemsize
