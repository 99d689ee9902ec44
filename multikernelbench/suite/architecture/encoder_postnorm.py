"""Post-norm transformer encoder layer via nn.TransformerEncoderLayer (ReLU FFN): LN(x + MHA(x)), LN(x + FFN(x))."""

import torch
import torch.nn as nn

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
        self.layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim, dropout=0.0,
                                                activation="relu", batch_first=True, norm_first=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


def get_init_inputs(shape):
    return [shape["dim"], shape["heads"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, ReLU, residual add 1 flop per element; LayerNorm 5 flops
# per element; per attention score: scale 1 + softmax 4. Bytes: input + parameters + output.
def flops(shape):
    b, L, d, h = shape["batch"], shape["seq"], shape["dim"], shape["heads"]
    n = b * L
    f = n * 3 * d * (2 * d + 1)                         # in-projection
    f += 4 * b * L * L * d + 5 * b * h * L * L          # attention
    f += n * d * (2 * d + 1) + n * d + n * d * 5        # out-proj, residual, LayerNorm
    f += n * 4 * d * (2 * d + 2) + n * d * (2 * 4 * d + 1) + n * d + n * d * 5  # FFN, residual, LayerNorm
    return f


def bytes_moved(shape, itemsize):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    params = (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d) + 4 * d
    return (2 * b * L * d + params) * itemsize
