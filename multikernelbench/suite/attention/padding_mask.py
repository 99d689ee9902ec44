"""Attention over right-padded batches: keys at positions >= lengths[b] are masked out (key padding mask), via SDPA."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 4, "heads": 4, "seq": 100, "head_dim": 32},
    {"batch": 5, "heads": 2, "seq": 129, "head_dim": 24},
]
BENCH_SHAPE = {"batch": 8, "heads": 16, "seq": 4096, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 2, "heads": 4, "seq": 512, "head_dim": 64}
# Long key sums with online-softmax rescaling; bf16 kernels differ in where they round.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # lengths: [batch] int64, number of valid (unpadded) keys per sequence, each in [1, seq].
        s = k.shape[-2]
        valid = torch.arange(s, device=q.device)[None, :] < lengths[:, None]  # [batch, seq], True = attend
        return F.scaled_dot_product_attention(q, k, v, attn_mask=valid[:, None, None, :])


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    lengths = randint(gen, max(1, s // 4), s + 1, b)  # between a quarter and all of the keys are valid
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d), lengths]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # The valid lengths are random per trial, so the full s*s score matrix is counted (upper bound; a kernel
    # that skips padded keys does ~5/8 of this on average).
    scores = b * h * s * s
    # q k^T and probs v: 2 * b*h*s*s*d each; scale + softmax (max, subtract, exp, sum, divide): 6 per score.
    return 2 * (2 * scores * d) + 6 * scores


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize + 8 * b  # q, k, v, output; int64 lengths
