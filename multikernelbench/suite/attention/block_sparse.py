"""Block-sparse attention: query block qb attends key block kb iff |qb - kb| <= 1 or kb % STRIDE == 0 (band + global columns)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
STRIDE = 4  # every STRIDE-th key block (0, STRIDE, 2*STRIDE, ...) is visible to all queries
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "block": 4, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "block": 8, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 129, "block": 16, "head_dim": 24},
]
# 64 blocks of 128: each query block sees ~18 key blocks (28% of the keys); a block-sparse kernel skips the rest.
BENCH_SHAPE = {"batch": 4, "heads": 16, "seq": 8192, "block": 128, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 1, "heads": 2, "seq": 1024, "block": 64, "head_dim": 64}
# Long key sums with online-softmax rescaling; bf16 kernels differ in where they round.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 1.0  # logits q.k/sqrt(d) have std ~1: a clearly non-uniform softmax whose bf16 rounding stays small


def _block_allowed(qb, kb):
    # Works on ints and on integer tensors; a sequence that is not a multiple of `block` ends in a short block.
    return ((qb - kb) <= 1) & ((kb - qb) <= 1) | (kb % STRIDE == 0)


class Model(nn.Module):
    def __init__(self, block: int):
        super().__init__()
        self.block = block

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        blk = torch.arange(q.shape[-2], device=q.device) // self.block  # block index of each position
        allowed = _block_allowed(blk[:, None], blk[None, :])  # [seq, seq], True = attend
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


def get_init_inputs(shape):
    return [shape["block"]]


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def _pairs_per_head(s, block):
    n = -(-s // block)
    size = [min(block, s - i * block) for i in range(n)]
    return sum(size[qb] * size[kb] for qb in range(n) for kb in range(n) if _block_allowed(qb, kb))


def flops(shape):
    b, h, d = shape["batch"], shape["heads"], shape["head_dim"]
    # Only the (query, key) pairs inside visible blocks are counted: the work a block-sparse kernel must do
    # (the eager reference computes and masks the full seq*seq matrix).
    pairs = b * h * _pairs_per_head(shape["seq"], shape["block"])
    # q k^T and probs v: 2 flops per multiply-add each; scale + softmax (max, subtract, exp, sum, divide): 6 per pair.
    return 2 * (2 * pairs * d) + 6 * pairs


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize  # q, k, v in, output out; the block layout is computed, not read
