"""Causal sliding-window (local) attention: query i attends keys i - window < j <= i, via SDPA with a boolean mask."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "window": 8, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "window": 33, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 129, "window": 17, "head_dim": 24},
]
# The window covers a quarter of the sequence; a windowed kernel skips the other ~3/4 of the score matrix.
BENCH_SHAPE = {"batch": 4, "heads": 16, "seq": 8192, "window": 2048, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 4, "seq": 1024, "window": 128, "head_dim": 64}
# Sums over up to `window` keys with online-softmax rescaling; bf16 kernels differ in where they round.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self, window: int):
        super().__init__()
        self.window = window

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        s = q.shape[-2]
        pos = torch.arange(s, device=q.device)
        offset = pos[:, None] - pos[None, :]  # query index minus key index
        allowed = (offset >= 0) & (offset < self.window)  # True = attend
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


def get_init_inputs(shape):
    return [shape["window"]]


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def _pairs_per_head(s, w):
    # Query i sees min(i + 1, w) keys: sum over i = w*(w+1)/2 for the ramp (i < w) plus w for each later query.
    w = min(w, s)
    return w * (w + 1) // 2 + (s - w) * w


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    # Only the unmasked (query, key) pairs are counted: the work a windowed kernel must do
    # (the eager reference computes and masks the full s*s matrix).
    pairs = b * h * _pairs_per_head(s, shape["window"])
    # q k^T and probs v: 2 flops per multiply-add each; scale + softmax (max, subtract, exp, sum, divide): 6 per pair.
    return 2 * (2 * pairs * d) + 6 * pairs


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize  # q, k, v in, output out; the mask is computed, not read
