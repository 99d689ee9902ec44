"""GPT-2 transformer block: pre-LayerNorm causal self-attention (fused c_attn, SDPA) and tanh-GELU MLP, residuals."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 32, "heads": 4},
    {"batch": 1, "seq": 33, "dim": 48, "heads": 3},
    {"batch": 3, "seq": 9, "dim": 24, "heads": 2},
]
BENCH_SHAPE = {"batch": 32, "seq": 1024, "dim": 1024, "heads": 16}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 0.91 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 2, "seq": 128, "dim": 256, "heads": 4}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # four chained matmuls + softmax + 2 LayerNorms


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.c_proj2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, L, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(b, L, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, L, d))
        return x + self.c_proj2(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual 1 flop per element; LayerNorm 5 flops per
# element; causal attention counts half of the L x L scores (what a causal kernel computes), 5 flops per
# score for scale+softmax. Bytes: input + parameters + output.
def flops(shape):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    n = b * L
    half = L * (L + 1) // 2
    f = 2 * n * d * 5
    f += n * 3 * d * (2 * d + 1)
    f += 4 * b * half * d + 5 * b * h * half
    f += n * d * (2 * d + 1) + n * d
    f += n * 4 * d * (2 * d + 2) + n * d * (2 * 4 * d + 1) + n * d
    return f


def bytes_moved(shape, itemsize):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    params = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d)
    return (2 * b * L * d + params) * itemsize
