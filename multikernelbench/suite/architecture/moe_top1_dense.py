"""Mixture-of-experts FFN with top-1 routing written densely: every expert runs on every token, outputs selected by one-hot gate times router probability."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"tokens": 37, "dim": 16, "hidden": 32, "experts": 4},
    {"tokens": 100, "dim": 24, "hidden": 17, "experts": 3},
    {"tokens": 17, "dim": 33, "hidden": 40, "experts": 8},
]
BENCH_SHAPE = {"tokens": 8192, "dim": 1024, "hidden": 4096, "experts": 8}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 0.95 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"tokens": 128, "dim": 256, "hidden": 512, "experts": 8}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # two chained matmuls scaled by a softmax gate


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int, experts: int):
        super().__init__()
        self.router = nn.Linear(dim, experts, bias=False)
        nn.init.normal_(self.router.weight, std=1.0 / dim ** 0.5 * 2)  # spread-out router logits
        self.w1 = nn.Parameter(torch.randn(experts, dim, hidden) / dim ** 0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, dim) / hidden ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(self.router(x), dim=-1)                      # (t, e)
        top_p, top_i = probs.max(dim=-1)
        gate = F.one_hot(top_i, probs.shape[-1]).to(x.dtype) * top_p[:, None]
        h = F.gelu(torch.einsum("td,edh->eth", x, self.w1))
        y = torch.einsum("eth,ehd->etd", h, self.w2)                       # every expert on every token
        return torch.einsum("te,etd->td", gate, y)


def get_init_inputs(shape):
    return [shape["dim"], shape["hidden"], shape["experts"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["tokens"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; GELU 1 flop/element; router softmax + argmax ~6 flops per
# logit; combine counts the dense (t, e) x (e, t, d) contraction the reference performs.
# Bytes: input + router and expert weights + output.
def flops(shape):
    t, d, h, e = shape["tokens"], shape["dim"], shape["hidden"], shape["experts"]
    return 2 * t * d * e + 6 * t * e + e * t * h * (2 * d + 1) + 2 * e * t * h * d + 2 * t * e * d


def bytes_moved(shape, itemsize):
    t, d, h, e = shape["tokens"], shape["dim"], shape["hidden"], shape["experts"]
    return (2 * t * d + d * e + 2 * e * d * h) * itemsize
