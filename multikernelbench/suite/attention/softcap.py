"""Attention with tanh logit soft-capping (Gemma-2 style): softmax(CAP * tanh(q k^T / (sqrt(d) * CAP))) v, written out."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
CAP = 5.0  # the logits' tails (|logit| > ~3) are visibly compressed at this cap
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 129, "head_dim": 24},
]
# The eager reference holds fp32 scores and probabilities [4, 16, 4096, 4096]: 8.6 GB.
BENCH_SHAPE = {"batch": 4, "heads": 16, "seq": 4096, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 4, "seq": 512, "head_dim": 64}
# Long key sums, online-softmax rescaling in fused kernels, bf16 rounding of scores in the reference.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.6  # logits q.k/sqrt(d) then have std ~2.6, so the cap matters for a good share of them


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores.mul_(1.0 / (math.sqrt(q.shape[-1]) * CAP))
        scores.tanh_().mul_(CAP)
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    scores = b * h * s * s
    # q k^T and probs v: 2 * b*h*s*s*d each; per score: scale, tanh (counted as 1), cap multiply, and softmax
    # (max, subtract, exp, sum, divide): 8.
    return 2 * (2 * scores * d) + 8 * scores


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize  # q, k, v in, output out; the score matrix is not compulsory
