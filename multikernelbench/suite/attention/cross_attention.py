"""Cross attention written out: queries of length q_len attend to a different key/value sequence of length kv_len."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "q_len": 17, "kv_len": 77, "head_dim": 16},
    {"batch": 1, "heads": 4, "q_len": 100, "kv_len": 37, "head_dim": 32},
    {"batch": 3, "heads": 2, "q_len": 33, "kv_len": 257, "head_dim": 24},
]
# The eager reference holds two fp32 [8, 16, 1024, 8192] tensors (scores, probabilities): 8.6 GB.
BENCH_SHAPE = {"batch": 8, "heads": 16, "q_len": 1024, "kv_len": 8192, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 4, "q_len": 256, "kv_len": 1024, "head_dim": 64}
# Sums over up to 8k keys, online-softmax rescaling in fused kernels, bf16 rounding of scores in the reference.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1))
        scores.mul_(1.0 / math.sqrt(q.shape[-1]))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, sq, skv, d = shape["batch"], shape["heads"], shape["q_len"], shape["kv_len"], shape["head_dim"]
    return [randn(gen, b, h, sq, d, std=QK_STD), randn(gen, b, h, skv, d, std=QK_STD), randn(gen, b, h, skv, d)]


def flops(shape):
    b, h, sq, skv, d = shape["batch"], shape["heads"], shape["q_len"], shape["kv_len"], shape["head_dim"]
    scores = b * h * sq * skv
    # q k^T and probs v: 2 * b*h*sq*skv*d each; scale + softmax (max, subtract, exp, sum, divide): 6 per score.
    return 2 * (2 * scores * d) + 6 * scores


def bytes_moved(shape, itemsize):
    b, h, sq, skv, d = shape["batch"], shape["heads"], shape["q_len"], shape["kv_len"], shape["head_dim"]
    return (2 * b * h * sq * d + 2 * b * h * skv * d) * itemsize  # q and output; k and v
