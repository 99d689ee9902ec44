"""Two-layer graph convolutional network on a dense adjacency: symmetric-normalised (A + I), linear transforms, ReLU between."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn, uniform

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "nodes": 17, "features": 8, "hidden": 16, "out": 5},
    {"batch": 1, "nodes": 37, "features": 33, "hidden": 12, "out": 7},
    {"batch": 3, "nodes": 9, "features": 4, "hidden": 20, "out": 3},
]
BENCH_SHAPE = {"batch": 16, "nodes": 4096, "features": 512, "hidden": 512, "out": 256}
CPU_BENCH_SHAPE = {"batch": 2, "nodes": 512, "features": 128, "hidden": 128, "out": 64}
# Neighbourhood sums over up to `nodes` terms, twice; bf16 rounds the normalised adjacency too.
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}


class Model(nn.Module):
    def __init__(self, features: int, hidden: int, out: int):
        super().__init__()
        self.w1 = nn.Linear(features, hidden)
        self.w2 = nn.Linear(hidden, out)

    def forward(self, x: torch.Tensor, edge_score: torch.Tensor) -> torch.Tensor:
        # An edge exists where the score exceeds 0.8 (~20% density); self-loops are always added.
        n = x.shape[1]
        adj = (edge_score > 0.8).to(x.dtype) + torch.eye(n, dtype=x.dtype, device=x.device)
        dinv = adj.sum(-1).rsqrt()
        a_hat = dinv[:, :, None] * adj * dinv[:, None, :]
        h = F.relu(a_hat @ self.w1(x))
        return a_hat @ self.w2(h)


def get_init_inputs(shape):
    return [shape["features"], shape["hidden"], shape["out"]]


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["nodes"]
    return [randn(gen, b, n, shape["features"]), uniform(gen, b, n, n)]


# Cost convention: multiply-add = 2 flops; threshold, identity add, row sum, rsqrt and the two-sided
# scaling ~ 6 flops per adjacency entry; bias and ReLU 1 flop per element. Bytes: x, edge scores,
# parameters, output.
def flops(shape):
    b, n, f, h, o = (shape[k] for k in ("batch", "nodes", "features", "hidden", "out"))
    flo = 6 * b * n * n
    flo += b * n * h * (2 * f + 1) + 2 * b * n * n * h + b * n * h   # layer 1 + ReLU
    flo += b * n * o * (2 * h + 1) + 2 * b * n * n * o               # layer 2
    return flo


def bytes_moved(shape, itemsize):
    b, n, f, h, o = (shape[k] for k in ("batch", "nodes", "features", "hidden", "out"))
    return (b * n * f + b * n * n + (f * h + h) + (h * o + o) + b * n * o) * itemsize
