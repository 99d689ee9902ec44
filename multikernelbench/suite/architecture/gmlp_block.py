"""gMLP block: LayerNorm, channel projection + GELU, spatial gating unit (LayerNorm + sequence-mixing linear), projection, residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "dim": 32},
    {"batch": 1, "seq": 33, "dim": 24},
    {"batch": 3, "seq": 8, "dim": 37},
]
BENCH_SHAPE = {"batch": 128, "seq": 512, "dim": 1024}
CPU_BENCH_SHAPE = {"batch": 4, "seq": 128, "dim": 256}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # three chained matmuls, two LayerNorms, gating


class Model(nn.Module):
    """Hidden width 4 x dim, split in two halves for the spatial gate."""

    def __init__(self, seq: int, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj_in = nn.Linear(dim, 4 * dim)
        self.gate_norm = nn.LayerNorm(2 * dim)
        self.spatial = nn.Linear(seq, seq)
        self.proj_out = nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u, v = F.gelu(self.proj_in(self.norm(x))).chunk(2, dim=-1)
        v = self.spatial(self.gate_norm(v).transpose(1, 2)).transpose(1, 2)
        return x + self.proj_out(u * v)


def get_init_inputs(shape):
    return [shape["seq"], shape["dim"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["seq"], shape["dim"])]


# Cost convention: multiply-add = 2 flops; bias, GELU, gate product and residual 1 flop per element;
# LayerNorm 5 flops per element. Bytes: input + parameters + output.
def flops(shape):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    n = b * L
    f = n * d * 5                         # LayerNorm
    f += n * 4 * d * (2 * d + 2)          # proj_in + bias + GELU
    f += n * 2 * d * 5                    # gate LayerNorm
    f += b * 2 * d * L * (2 * L + 1)      # spatial mixing + bias
    f += n * 2 * d                        # u * v
    f += n * d * (2 * 2 * d + 1) + n * d  # proj_out + bias, residual
    return f


def bytes_moved(shape, itemsize):
    b, L, d = shape["batch"], shape["seq"], shape["dim"]
    params = 2 * d + (4 * d * d + 4 * d) + 4 * d + (L * L + L) + (2 * d * d + d)
    return (2 * b * L * d + params) * itemsize
