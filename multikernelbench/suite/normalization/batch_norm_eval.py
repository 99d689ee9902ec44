"""BatchNorm2d in inference mode: normalise with stored (randomly initialised) running statistics, then affine."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 37, "height": 8, "width": 9},
    {"batch": 1, "channels": 64, "height": 31, "width": 29},
]
BENCH_SHAPE = {"batch": 128, "channels": 256, "height": 128, "width": 128}
CPU_BENCH_SHAPE = {"batch": 8, "channels": 64, "height": 64, "width": 64}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, eps=1e-5)
        nn.init.uniform_(self.bn.weight, 0.5, 1.5)
        nn.init.uniform_(self.bn.bias, -0.5, 0.5)
        # Running statistics are buffers: random so the normalisation is not the identity.
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1.0, 1.0)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)  # the harness puts the model in eval mode: running stats are used


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"])]


def flops(shape):
    # Per element: subtract mean, multiply by inverse std, multiply weight, add bias = 4.
    # Per channel: add eps, sqrt/rsqrt = 2.
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    return 4 * n + 2 * shape["channels"]


def bytes_moved(shape, itemsize):
    n = shape["batch"] * shape["channels"] * shape["height"] * shape["width"]
    # input + output + weight, bias, running_mean, running_var
    return (2 * n + 4 * shape["channels"]) * itemsize
