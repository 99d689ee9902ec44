"""Pre-norm transformer decoder layer: causal self-attention, cross-attention to encoder memory, ReLU FFN, residuals."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "mem": 9, "dim": 32, "heads": 4},
    {"batch": 1, "seq": 33, "mem": 20, "dim": 48, "heads": 3},
    {"batch": 3, "seq": 8, "mem": 37, "dim": 24, "heads": 2},
]
BENCH_SHAPE = {"batch": 32, "seq": 1024, "mem": 1024, "dim": 1024, "heads": 16}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "mem": 128, "dim": 256, "heads": 4}
TOLERANCE = {"float32": (3e-4, 3e-4), "bfloat16": (5e-2, 5e-2)}  # two attentions, FFN and three LayerNorms


def _attend(q, k, v, heads, causal):
    b, lq, d = q.shape
    lk = k.shape[1]
    dh = d // heads
    q = q.view(b, lq, heads, dh).transpose(1, 2)
    k = k.view(b, lk, heads, dh).transpose(1, 2)
    v = v.view(b, lk, heads, dh).transpose(1, 2)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(dh)
    if causal:
        mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, lq, d)


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o1 = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.q2 = nn.Linear(dim, dim)
        self.kv2 = nn.Linear(dim, 2 * dim)
        self.o2 = nn.Linear(dim, dim)
        self.norm3 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        x = x + self.o1(_attend(q, k, v, self.heads, causal=True))
        k2, v2 = self.kv2(memory).chunk(2, dim=-1)
        x = x + self.o2(_attend(self.q2(self.norm2(x)), k2, v2, self.heads, causal=False))
        return x + self.fc2(F.relu(self.fc1(self.norm3(x))))


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    b, d = shape["batch"], shape["dim"]
    return [randn(gen, b, shape["seq"], d), randn(gen, b, shape["mem"], d)]


# Cost convention: multiply-add = 2 flops; bias, ReLU, residual 1 flop per element; LayerNorm 5 flops per
# element; per attention score scale 1 + softmax 4 (+1 for the causal mask). The causal score matrix is
# counted in full, as the reference computes it. Bytes: x, memory, parameters, output.
def flops(shape):
    b, L, m, d, h = shape["batch"], shape["seq"], shape["mem"], shape["dim"], shape["heads"]
    n = b * L
    f = 3 * n * d * 5                                           # LayerNorms
    f += n * 3 * d * (2 * d + 1) + 4 * b * L * L * d + 6 * b * h * L * L + n * d * (2 * d + 1) + n * d
    f += n * d * (2 * d + 1) + b * m * 2 * d * (2 * d + 1)      # cross q and kv projections
    f += 4 * b * L * m * d + 5 * b * h * L * m + n * d * (2 * d + 1) + n * d
    f += n * 4 * d * (2 * d + 2) + n * d * (2 * 4 * d + 1) + n * d
    return f


def bytes_moved(shape, itemsize):
    b, L, m, d = shape["batch"], shape["seq"], shape["mem"], shape["dim"]
    params = 6 * d + (3 * d * d + 3 * d) + 3 * (d * d + d) + (2 * d * d + 2 * d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return (2 * b * L * d + b * m * d + params) * itemsize
