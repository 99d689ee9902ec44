"""ResMLP block: affine norm, linear mixing across patches, layer-scaled residual; affine norm, GELU MLP, layer-scaled residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "patches": 17, "channels": 32},
    {"batch": 1, "patches": 49, "channels": 24},
    {"batch": 3, "patches": 9, "channels": 37},
]
BENCH_SHAPE = {"batch": 512, "patches": 196, "channels": 768}
CPU_BENCH_SHAPE = {"batch": 8, "patches": 64, "channels": 256}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # three chained matmuls


class Affine(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(c))
        self.beta = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        return self.alpha * x + self.beta


class Model(nn.Module):
    def __init__(self, patches: int, channels: int):
        super().__init__()
        c = channels
        self.aff1 = Affine(c)
        self.token = nn.Linear(patches, patches)
        self.aff2 = Affine(c)
        self.fc1 = nn.Linear(c, 4 * c)
        self.fc2 = nn.Linear(4 * c, c)
        # Layer scale 0.5 rather than the training-time 0.1/1e-5, so both branches matter at init.
        self.ls1 = nn.Parameter(torch.full((c,), 0.5))
        self.ls2 = nn.Parameter(torch.full((c,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.ls1 * self.token(self.aff1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ls2 * self.fc2(F.gelu(self.fc1(self.aff2(x))))


def get_init_inputs(shape):
    return [shape["patches"], shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["patches"], shape["channels"])]


# Cost convention: multiply-add = 2 flops; affine 2 flops/element; bias, GELU, layer scale, residual
# 1 flop per element. Bytes: input + parameters + output.
def flops(shape):
    b, p, c = shape["batch"], shape["patches"], shape["channels"]
    n = b * p * c
    f = n * 2 + b * c * p * (2 * p + 1) + 2 * n                 # affine, token linear, scale + residual
    f += n * 2 + b * p * 4 * c * (2 * c + 2) + n * (2 * 4 * c + 1) + 2 * n  # affine, fc1+GELU, fc2, scale+res
    return f


def bytes_moved(shape, itemsize):
    b, p, c = shape["batch"], shape["patches"], shape["channels"]
    params = 4 * c + (p * p + p) + (4 * c * c + 4 * c) + (4 * c * c + c) + 2 * c
    return (2 * b * p * c + params) * itemsize
