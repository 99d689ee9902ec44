"""Swin-style block: LayerNorm, multi-head attention inside non-overlapping windows with a learned relative position bias, MLP; residuals."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "size": 8, "window": 4, "dim": 24, "heads": 3},
    {"batch": 1, "size": 15, "window": 5, "dim": 32, "heads": 4},
    {"batch": 3, "size": 6, "window": 3, "dim": 18, "heads": 2},
]
BENCH_SHAPE = {"batch": 128, "size": 56, "window": 7, "dim": 256, "heads": 8}
CPU_BENCH_SHAPE = {"batch": 1, "size": 28, "window": 7, "dim": 96, "heads": 3}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # four chained matmuls, softmax, two LayerNorms


class Model(nn.Module):
    def __init__(self, window: int, dim: int, heads: int):
        super().__init__()
        self.w, self.heads = window, heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads) * 0.5)
        c = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("rel_index", rel[..., 0] * (2 * window - 1) + rel[..., 1], persistent=False)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, H, W, c = x.shape
        w, h = self.w, self.heads
        t = self.norm1(x).view(b, H // w, w, W // w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, c)
        q, k, v = self.qkv(t).view(t.shape[0], w * w, 3, h, c // h).permute(2, 0, 3, 1, 4)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(c // h)
        s = s + self.bias_table[self.rel_index].permute(2, 0, 1)
        o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(-1, w * w, c)
        o = self.proj(o).view(b, H // w, W // w, w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, H, W, c)
        x = x + o
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def get_init_inputs(shape):
    return [shape["window"], shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    s = shape["size"]
    return [randn(gen, shape["batch"], s, s, shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual 1 flop/element; LayerNorm 5 flops/element;
# per score: scale, bias add and softmax(4) = 6 flops. Bytes: input + parameters + output (the relative
# index buffer is integer metadata, counted at 8 bytes per entry).
def flops(shape):
    b, s, w, d, h = (shape[x] for x in ("batch", "size", "window", "dim", "heads"))
    t = b * s * s
    nw = b * (s // w) ** 2
    a = w * w
    f = 2 * t * d * 5 + t * 3 * d * (2 * d + 1)
    f += nw * (4 * a * a * d + 6 * h * a * a)
    f += t * d * (2 * d + 1) + t * d
    f += t * 4 * d * (2 * d + 2) + t * d * (2 * 4 * d + 1) + t * d
    return f


def bytes_moved(shape, itemsize):
    b, s, w, d, h = (shape[x] for x in ("batch", "size", "window", "dim", "heads"))
    params = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (2 * w - 1) ** 2 * h + (4 * d * d + 4 * d) + (4 * d * d + d)
    return (2 * b * s * s * d + params) * itemsize + (w ** 4) * 8
