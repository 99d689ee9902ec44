"""Perceiver-style cross-attention block: learned latent array attends to a long input sequence, then a latent MLP; residuals."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "inputs": 37, "in_dim": 12, "latents": 8, "dim": 32, "heads": 4},
    {"batch": 1, "inputs": 100, "in_dim": 5, "latents": 17, "dim": 24, "heads": 2},
    {"batch": 3, "inputs": 19, "in_dim": 33, "latents": 4, "dim": 48, "heads": 3},
]
BENCH_SHAPE = {"batch": 16, "inputs": 8192, "in_dim": 256, "latents": 512, "dim": 1024, "heads": 8}
CPU_BENCH_SHAPE = {"batch": 1, "inputs": 1024, "in_dim": 64, "latents": 64, "dim": 256, "heads": 4}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # long softmax over inputs, several matmuls


class Model(nn.Module):
    def __init__(self, in_dim: int, latents: int, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.latents = nn.Parameter(torch.randn(latents, dim))
        self.norm_q = nn.LayerNorm(dim)
        self.norm_kv = nn.LayerNorm(in_dim)
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(in_dim, 2 * dim)
        self.o = nn.Linear(dim, dim)
        self.norm_mlp = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        m, d = self.latents.shape
        h, hd = self.heads, d // self.heads
        lat = self.latents.expand(b, m, d)
        q = self.q(self.norm_q(lat)).view(b, m, h, hd).transpose(1, 2)
        k, v = self.kv(self.norm_kv(x)).view(b, n, 2, h, hd).permute(2, 0, 3, 1, 4)
        att = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1)
        z = lat + self.o((att @ v).transpose(1, 2).reshape(b, m, d))
        return z + self.fc2(F.gelu(self.fc1(self.norm_mlp(z))))


def get_init_inputs(shape):
    return [shape["in_dim"], shape["latents"], shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["inputs"], shape["in_dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual 1 flop/element; LayerNorm 5 flops/element;
# 5 flops per attention score for scale + softmax. The latent-side LayerNorm and q projection are counted
# once per batch element, as the reference computes them. Bytes: input + parameters + output.
def flops(shape):
    b, n, e, m, d, h = (shape[x] for x in ("batch", "inputs", "in_dim", "latents", "dim", "heads"))
    f = b * m * d * 5 + b * m * d * (2 * d + 1)
    f += b * n * e * 5 + b * n * 2 * d * (2 * e + 1)
    f += 4 * b * m * n * d + 5 * b * h * m * n
    f += b * m * d * (2 * d + 1) + b * m * d
    f += b * m * d * 5 + b * m * 4 * d * (2 * d + 2) + b * m * d * (2 * 4 * d + 1) + b * m * d
    return f


def bytes_moved(shape, itemsize):
    b, n, e, m, d = (shape[x] for x in ("batch", "inputs", "in_dim", "latents", "dim"))
    params = m * d + 2 * d + 2 * e + (d * d + d) + (e * 2 * d + 2 * d) + (d * d + d) + 2 * d
    params += (4 * d * d + 4 * d) + (4 * d * d + d)
    return (b * n * e + params + b * m * d) * itemsize
