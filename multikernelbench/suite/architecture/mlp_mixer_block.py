"""MLP-Mixer block: LayerNorm + token-mixing MLP across patches, LayerNorm + channel-mixing MLP, both residual, GELU."""

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
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # four chained matmuls, two LayerNorms


class Model(nn.Module):
    """Token-mixing hidden width = 2 x patches, channel-mixing hidden width = 4 x channels."""

    def __init__(self, patches: int, channels: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(channels)
        self.tok1 = nn.Linear(patches, 2 * patches)
        self.tok2 = nn.Linear(2 * patches, patches)
        self.norm2 = nn.LayerNorm(channels)
        self.ch1 = nn.Linear(channels, 4 * channels)
        self.ch2 = nn.Linear(4 * channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm1(x).transpose(1, 2)
        x = x + self.tok2(F.gelu(self.tok1(y))).transpose(1, 2)
        return x + self.ch2(F.gelu(self.ch1(self.norm2(x))))


def get_init_inputs(shape):
    return [shape["patches"], shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["patches"], shape["channels"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual add 1 flop per element; LayerNorm 5 flops
# per element. Bytes: input + parameters + output.
def flops(shape):
    b, p, c = shape["batch"], shape["patches"], shape["channels"]
    n = b * p * c
    f = 2 * n * 5                                             # two LayerNorms
    f += b * c * (2 * p * (2 * p + 2) + p * (2 * 2 * p + 1))  # token MLP (+bias, GELU)
    f += b * p * (4 * c * (2 * c + 2) + c * (2 * 4 * c + 1))  # channel MLP (+bias, GELU)
    return f + 2 * n                                          # residual adds


def bytes_moved(shape, itemsize):
    b, p, c = shape["batch"], shape["patches"], shape["channels"]
    params = 4 * c + (2 * p * p + 2 * p) + (2 * p * p + p) + (4 * c * c + 4 * c) + (4 * c * c + c)
    return (2 * b * p * c + params) * itemsize
