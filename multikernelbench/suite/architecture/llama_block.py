"""LLaMA-style decoder block: RMSNorm, grouped-query causal attention with rotary embeddings, RMSNorm, SwiGLU MLP."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 32, "heads": 4, "kv_heads": 2, "ffn": 88},
    {"batch": 1, "seq": 33, "dim": 48, "heads": 6, "kv_heads": 3, "ffn": 128},
    {"batch": 3, "seq": 9, "dim": 24, "heads": 2, "kv_heads": 1, "ffn": 37},
]
BENCH_SHAPE = {"batch": 8, "seq": 2048, "dim": 2048, "heads": 16, "kv_heads": 4, "ffn": 5632}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "dim": 256, "heads": 4, "kv_heads": 2, "ffn": 688}
TOLERANCE = {"float32": (3e-4, 3e-4), "bfloat16": (5e-2, 5e-2)}  # five matmuls, softmax, rotary, two norms


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Model(nn.Module):
    def __init__(self, seq: int, dim: int, heads: int, kv_heads: int, ffn: int):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.attn_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, ffn, bias=False)
        self.w3 = nn.Linear(dim, ffn, bias=False)
        self.w2 = nn.Linear(ffn, dim, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        ang = torch.outer(torch.arange(seq).float(), inv)
        ang = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, L, self.heads, self.hd).transpose(1, 2)
        k = self.wk(h).view(b, L, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(h).view(b, L, self.kv_heads, self.hd).transpose(1, 2)
        q, k = _rotate(q, self.cos, self.sin), _rotate(k, self.cos, self.sin)
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        o = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, L, d)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def get_init_inputs(shape):
    return [shape["seq"], shape["dim"], shape["heads"], shape["kv_heads"], shape["ffn"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; RMSNorm 4 flops/element; rotary 3 flops per q/k element;
# per attention score scale + mask + softmax = 6 (full L x L as the reference computes it); SiLU, gate
# product and residual adds 1 flop/element. Bytes: input + weights (+ the rotary tables) + output.
def flops(shape):
    b, L, d, h, kvh, f_ = shape["batch"], shape["seq"], shape["dim"], shape["heads"], shape["kv_heads"], shape["ffn"]
    n, hd = b * L, d // h
    kvd = kvh * hd
    f = 2 * n * d * 4                                         # RMSNorms
    f += 2 * n * d * (d + 2 * kvd)                            # q, k, v projections
    f += 3 * n * (d + kvd)                                    # rotary on q and k
    f += 4 * b * L * L * d + 6 * b * h * L * L                # attention
    f += 2 * n * d * d + n * d                                # wo + residual
    f += 2 * n * d * f_ * 2 + 2 * n * f_ + 2 * n * f_ * d + n * d  # w1, w3, SiLU*gate, w2, residual
    return f


def bytes_moved(shape, itemsize):
    b, L, d, h, kvh, f_ = shape["batch"], shape["seq"], shape["dim"], shape["heads"], shape["kv_heads"], shape["ffn"]
    hd = d // h
    params = 2 * d + d * d + 2 * d * kvh * hd + d * d + 3 * d * f_ + 2 * L * hd
    return (2 * b * L * d + params) * itemsize
