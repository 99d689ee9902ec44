"""Single-token grouped-query decode: heads // kv_heads query heads share each cached key/value head, written out."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 4, "kv_heads": 2, "cache_len": 37, "head_dim": 16},
    {"batch": 5, "heads": 6, "kv_heads": 3, "cache_len": 1000, "head_dim": 32},
    {"batch": 3, "heads": 8, "kv_heads": 1, "cache_len": 4099, "head_dim": 64},
]
# Reads a 4.3 GB fp32 cache once: bandwidth-bound, ~1.3 ms at 3.35 TB/s.
BENCH_SHAPE = {"batch": 16, "heads": 32, "kv_heads": 8, "cache_len": 32768, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 4, "heads": 32, "kv_heads": 8, "cache_len": 4096, "head_dim": 128}
# Sums over up to 32k cached keys; split-K decode kernels combine partial softmaxes in a different order.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor) -> torch.Tensor:
        # q: [batch, heads, 1, head_dim]; caches: [batch, kv_heads, cache_len, head_dim].
        b, h, _, d = q.shape
        hk = k_cache.shape[1]
        qg = q.reshape(b, hk, h // hk, d)  # query head i belongs to kv head i // (h // hk)
        scores = torch.matmul(qg, k_cache.transpose(-2, -1)) * (1.0 / math.sqrt(d))  # [b, hk, group, cache_len]
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v_cache).reshape(b, h, 1, d)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, hk, s, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["cache_len"], shape["head_dim"]
    return [randn(gen, b, h, 1, d, std=QK_STD), randn(gen, b, hk, s, d, std=QK_STD), randn(gen, b, hk, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["cache_len"], shape["head_dim"]
    scores = b * h * s  # one query row per query head
    # q k^T and probs v: 2 * b*h*s*d each; scale + softmax (max, subtract, exp, sum, divide): 6 per score.
    return 2 * (2 * scores * d) + 6 * scores


def bytes_moved(shape, itemsize):
    b, h, hk, s, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["cache_len"], shape["head_dim"]
    return (2 * b * hk * s * d + 2 * b * h * d) * itemsize  # both caches once, plus the query and the output
