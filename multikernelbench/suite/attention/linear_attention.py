"""Non-causal linear attention with feature map elu(x)+1: phi(q) (phi(k)^T v) / (phi(q) . sum_j phi(k_j))."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "heads": 3, "seq": 37, "head_dim": 16},
    {"batch": 1, "heads": 4, "seq": 100, "head_dim": 32},
    {"batch": 3, "heads": 2, "seq": 257, "head_dim": 24},
]
BENCH_SHAPE = {"batch": 16, "heads": 16, "seq": 8192, "head_dim": 128}
CPU_BENCH_SHAPE = {"batch": 2, "heads": 8, "seq": 2048, "head_dim": 64}
# phi(k)^T v sums seq products per entry (8k at bench shape); different reduction orders cost fp32 bits.
TOLERANCE = {"float32": (1e-3, 1e-3), "bfloat16": (3e-2, 3e-2)}
QK_STD = 2.0  # spreads phi(x) = elu(x)+1 over (0, ~5] so the weights differ strongly between keys
EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        phi_q = F.elu(q) + 1.0
        phi_k = F.elu(k) + 1.0
        kv = torch.matmul(phi_k.transpose(-2, -1), v)  # [b, h, d, d]
        k_sum = phi_k.sum(dim=-2)  # [b, h, d]
        num = torch.matmul(phi_q, kv)  # [b, h, s, d]
        den = torch.matmul(phi_q, k_sum.unsqueeze(-1))  # [b, h, s, 1]
        return num / (den + EPS)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return [randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d, std=QK_STD), randn(gen, b, h, s, d)]


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    n = b * h * s * d
    feature_map = 2 * 2 * n  # elu + 1 on q and k, counted as 2 flops per element
    kv = 2 * b * h * s * d * d  # phi(k)^T v
    k_sum = n  # sum of phi(k) over the sequence
    num = 2 * b * h * s * d * d  # phi(q) kv
    den = 2 * n + b * h * s  # phi(q) . k_sum, plus eps
    divide = n
    return feature_map + kv + k_sum + num + den + divide


def bytes_moved(shape, itemsize):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return 4 * b * h * s * d * itemsize  # q, k, v in, output out; kv and k_sum are tiny on-chip state
