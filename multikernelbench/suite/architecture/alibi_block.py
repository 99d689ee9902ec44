"""BLOOM-style block: pre-LayerNorm causal self-attention with ALiBi linear position biases, GELU MLP, residuals."""

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
        # Geometric head slopes 2^(-8 i / heads), i = 1..heads (a constant, not a parameter).
        self.slopes = [2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)]
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).view(b, L, 3, h, d // h).permute(2, 0, 3, 1, 4)
        pos = torch.arange(L, device=x.device)
        dist = (pos[None, :] - pos[:, None]).to(x.dtype)                 # j - i, <= 0 on the causal side
        slopes = torch.tensor(self.slopes, device=x.device, dtype=x.dtype)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d // h) + slopes[:, None, None] * dist
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, L, d)
        x = x + self.dense(o)
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual 1 flop/element; LayerNorm 5 flops/element;
# per score: scale, ALiBi add, mask, softmax(4) = 7 flops, full L x L as the reference computes it.
# Bytes: input + parameters + output.
def flops(shape):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    n = b * L
    f = 2 * n * d * 5 + n * 3 * d * (2 * d + 1)
    f += 4 * b * L * L * d + 7 * b * h * L * L
    f += n * d * (2 * d + 1) + n * d
    f += n * 4 * d * (2 * d + 2) + n * d * (2 * 4 * d + 1) + n * d
    return f


def bytes_moved(shape, itemsize):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    params = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return (2 * b * L * d + params) * itemsize
