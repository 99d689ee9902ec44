"""Long-context causal attention (16k tokens at bench shape) via F.scaled_dot_product_attention(is_causal=True)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 1, "heads": 2, "seq": 257, "head_dim": 32},
    {"batch": 2, "heads": 1, "seq": 513, "head_dim": 16},
    {"batch": 1, "heads": 3, "seq": 333, "head_dim": 64},
]
BENCH_SHAPE = {"batch": 1, "heads": 16, "seq": 16384, "head_dim": 128}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is fp32 attention matmuls that run at the measured fp32 "
        "matmul peak (eager at 0.91 of the bound); the fp32 tolerance rules out TF32. Kept for "
        "correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 2, "seq": 1024, "head_dim": 64}
# Sums over up to 16k keys with online-softmax rescaling; bf16 kernels differ in where they round.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # Only the s*(s+1)/2 unmasked (query, key) pairs are counted (the work a causal kernel must do).
    pairs = b * h * s * (s + 1) // 2
    # q k^T and probs v: 2 flops per multiply-add each; scale + softmax (max, subtract, exp, sum, divide): 6 per pair.
    return 2 * (2 * pairs * d) + 6 * pairs


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize  # q, k, v in, output out
