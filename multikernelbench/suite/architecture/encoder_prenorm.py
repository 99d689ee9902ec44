"""Pre-norm transformer encoder layer: x + MHA(LN(x)), then x + MLP(LN(x)) with GELU; attention written out explicitly."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 32, "heads": 4},
    {"batch": 1, "seq": 33, "dim": 48, "heads": 3},
    {"batch": 3, "seq": 9, "dim": 24, "heads": 2},
]
BENCH_SHAPE = {"batch": 32, "seq": 1024, "dim": 1024, "heads": 16}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "dim": 256, "heads": 4}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # four chained matmuls + softmax + 2 LayerNorms


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).view(b, L, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(d // h), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, L, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual add 1 flop per element; LayerNorm 5 flops
# per element; per attention score: scale 1 + softmax 4 (max, subtract+exp, sum, divide).
# Bytes: input + parameters + output, once each.
def flops(shape):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    n = b * L
    f = 2 * n * d * 5                                   # LayerNorms
    f += n * 3 * d * (2 * d + 1)                        # qkv
    f += 4 * b * L * L * d + 5 * b * h * L * L          # QK^T, softmax, AV
    f += n * d * (2 * d + 1) + n * d                    # proj + residual
    f += n * 4 * d * (2 * d + 2) + n * d * (2 * 4 * d + 1) + n * d  # MLP + residual
    return f


def bytes_moved(shape, itemsize):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    params = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return (2 * b * L * d + params) * itemsize
