"""Rotary position embedding (rotate-half form) applied to q and k, then causal attention via SDPA."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 129, "head_dim": 64},
]
BENCH_SHAPE = {"batch": 4, "heads": 32, "seq": 4096, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 4, "seq": 512, "head_dim": 64}
# Long key sums with online-softmax rescaling; bf16 kernels differ in where they round (and the bf16
# model stores cos/sin in bf16).
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small
BASE = 10000.0


class Model(nn.Module):
    def __init__(self, seq: int, head_dim: int):
        super().__init__()
        half = head_dim // 2
        inv_freq = BASE ** (-torch.arange(half, dtype=torch.float64) / half)
        angles = torch.arange(seq, dtype=torch.float64)[:, None] * inv_freq[None, :]  # [seq, half]
        angles = torch.cat([angles, angles], dim=-1)  # [seq, head_dim]
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())

    def _rotate(self, x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos + rotated * self.sin

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(self._rotate(q), self._rotate(k), v, is_causal=True)


def get_init_inputs(shape):
    return [shape["seq"], shape["head_dim"]]


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    rope = 2 * 3 * b * h * s * d  # q and k: x*cos + rot(x)*sin = 2 multiplies + 1 add per element (negation free)
    # Only the s*(s+1)/2 unmasked (query, key) pairs are counted (the work a causal kernel must do).
    pairs = b * h * s * (s + 1) // 2
    # q k^T and probs v: 2 flops per multiply-add each; scale + softmax (max, subtract, exp, sum, divide): 6 per pair.
    return rope + 2 * (2 * pairs * d) + 6 * pairs


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # q, k, v in, output out, plus the cos and sin tables [seq, head_dim].
    return (4 * b * h * s * d + 2 * s * d) * itemsize
