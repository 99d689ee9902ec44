"""ConvNeXt block: 7x7 depthwise conv, channels-last LayerNorm, 4x pointwise MLP with GELU, layer scale, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 8, "size": 17},
    {"batch": 1, "channels": 12, "size": 33},
    {"batch": 3, "channels": 20, "size": 7},
]
BENCH_SHAPE = {"batch": 256, "channels": 256, "size": 56}
CPU_BENCH_SHAPE = {"batch": 2, "channels": 64, "size": 28}


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        c = channels
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.fc1 = nn.Linear(c, 4 * c)
        self.fc2 = nn.Linear(4 * c, c)
        # Layer scale starts at 0.5 (not 1e-6 as in training recipes) so the branch is visible in the output.
        self.gamma = nn.Parameter(torch.full((c,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


def get_init_inputs(shape):
    return [shape["channels"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["channels"], shape["size"], shape["size"])]


# Cost convention: multiply-add = 2 flops; bias add, GELU, layer scale and residual 1 flop/element;
# LayerNorm ~5 flops/element (mean, var, normalize, scale, shift). Bytes: input + parameters + output.
def flops(shape):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    n = b * s * s
    f = n * c * (2 * 49 + 1)           # depthwise 7x7 + bias
    f += n * c * 5                     # LayerNorm
    f += n * 4 * c * (2 * c + 1 + 1)   # fc1 + bias + GELU
    f += n * c * (2 * 4 * c + 1)       # fc2 + bias
    f += n * c * 2                     # layer scale + residual
    return f


def bytes_moved(shape, itemsize):
    b, c, s = shape["batch"], shape["channels"], shape["size"]
    params = (49 * c + c) + 2 * c + (4 * c * c + 4 * c) + (4 * c * c + c) + c
    return (2 * b * c * s * s + params) * itemsize
