"""Attention with an additive ALiBi-style distance bias: softmax(q k^T / sqrt(d) - slope_h * |i - j|) v, written out."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 8, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 4, "seq": 129, "head_dim": 24},
]
# The eager reference holds fp32 scores and probabilities [4, 16, 4096, 4096] (8.6 GB) plus a 1 GB bias.
BENCH_SHAPE = {"batch": 4, "heads": 16, "seq": 4096, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 3, "seq": 512, "head_dim": 64}
# Long key sums, online-softmax rescaling in fused kernels, bf16 rounding of scores in the reference.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self, heads: int):
        super().__init__()
        # Geometric per-head slopes 2^(-8 (h + 1) / heads), as in ALiBi. A buffer, not a learned parameter.
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)])
        self.register_buffer("slopes", slopes)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        s = q.shape[-2]
        pos = torch.arange(s, device=q.device, dtype=q.dtype)
        dist = (pos[:, None] - pos[None, :]).abs()  # [s, s]
        bias = -self.slopes[:, None, None] * dist  # [heads, s, s]
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores.mul_(1.0 / math.sqrt(q.shape[-1]))
        scores.add_(bias)
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


def get_init_inputs(shape):
    return [shape["heads"]]


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    scores = b * h * s * s
    # q k^T and probs v: 2 * b*h*s*s*d each; scale + bias add + softmax (max, subtract, exp, sum, divide): 7 per
    # score; building the bias: |i - j| (2 per (i, j)) and slope * dist (1 per (h, i, j)).
    return 2 * (2 * scores * d) + 7 * scores + 2 * s * s + h * s * s


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # q, k, v in, output out, plus the per-head slopes; the bias is recomputed on the fly, not read.
    return (4 * b * h * s * d + h) * itemsize
