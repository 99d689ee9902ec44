"""Multi-query attention written out: many query heads share one key/value head (k, v are [batch, 1, seq, head_dim])."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 8, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 5, "seq": 77, "head_dim": 24},
]
# The eager reference holds two fp32 [16, 16, 2048, 2048] tensors (scores, probabilities): 8.6 GB.
BENCH_SHAPE = {"batch": 16, "heads": 16, "seq": 2048, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 8, "seq": 384, "head_dim": 64}
# Long key sums, online-softmax rescaling in fused kernels, bf16 rounding of scores in the reference.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # k, v have a head dimension of 1 and broadcast over the query heads.
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores.mul_(1.0 / math.sqrt(q.shape[-1]))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, 1, s, d, std=QK_STD), randn(gen, b, 1, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    scores = b * h * s * s
    # q k^T and probs v: 2 * b*h*s*s*d each; scale + softmax (max, subtract, exp, sum, divide): 6 per score.
    return 2 * (2 * scores * d) + 6 * scores


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # q and the output have `heads` heads; the shared k and v one head each.
    return (2 * b * h * s * d + 2 * b * s * d) * itemsize
