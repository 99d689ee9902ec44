"""Multi-head attention written out: softmax(q k^T / sqrt(d)) v on [batch, heads, seq, head_dim] tensors."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 129, "head_dim": 24},
]
# The eager reference materialises two fp32 [4, 16, 4096, 4096] score/probability tensors (8.6 GB).
BENCH_SHAPE = {"batch": 4, "heads": 16, "seq": 4096, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 4, "seq": 512, "head_dim": 64}
# Sums over up to thousands of keys; fused (online-softmax) kernels rescale partial sums in a different
# order, and in bf16 the reference rounds scores and probabilities to bf16: widen both tolerances.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores.mul_(scale)
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
    # q k^T and probs v: 2 * b*h*s*s*d each; scale + softmax (max, subtract, exp, sum, divide): 6 per score.
    return 2 * (2 * scores * d) + 6 * scores


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # q, k, v read and the output written once; the score matrix is not compulsory (a fused kernel keeps it on chip).
    return 4 * b * h * s * d * itemsize
