"""DLRM-style recommender: bottom MLP on dense features, embedding lookups, pairwise dot-product interaction, top MLP to a logit."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randint, randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 5, "dense": 13, "tables": 4, "rows": 37, "dim": 8},
    {"batch": 16, "dense": 7, "tables": 3, "rows": 100, "dim": 16},
    {"batch": 3, "dense": 33, "tables": 6, "rows": 17, "dim": 12},
]
BENCH_SHAPE = {"batch": 262144, "dense": 512, "tables": 26, "rows": 100000, "dim": 128}
CPU_BENCH_SHAPE = {"batch": 512, "dense": 13, "tables": 26, "rows": 10000, "dim": 64}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (1e-2, 1e-2)}  # bf16 vs fp32 reference error <= 0.3 of this; looser lets a constant pass


class Model(nn.Module):
    def __init__(self, dense: int, tables: int, rows: int, dim: int):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, 4 * dim), nn.ReLU(), nn.Linear(4 * dim, dim), nn.ReLU())
        self.emb = nn.ModuleList(nn.Embedding(rows, dim) for _ in range(tables))
        f = tables + 1
        self.top = nn.Sequential(nn.Linear(dim + f * (f - 1) // 2, 4 * dim), nn.ReLU(),
                                 nn.Linear(4 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, 1))
        iu = torch.triu_indices(f, f, offset=1)
        self.register_buffer("iu0", iu[0], persistent=False)
        self.register_buffer("iu1", iu[1], persistent=False)

    def forward(self, dense: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        d = self.bottom(dense)
        feats = torch.stack([d] + [e(idx[:, i]) for i, e in enumerate(self.emb)], dim=1)  # (b, f, dim)
        inter = (feats @ feats.transpose(1, 2))[:, self.iu0, self.iu1]
        return self.top(torch.cat([d, inter], dim=1))


def get_init_inputs(shape):
    return [shape["dense"], shape["tables"], shape["rows"], shape["dim"]]


def get_inputs(shape, gen):
    b = shape["batch"]
    return [randn(gen, b, shape["dense"]), randint(gen, 0, shape["rows"], b, shape["tables"])]


# Cost convention: multiply-add = 2 flops; bias and ReLU 1 flop per element; lookups are data movement.
# The interaction counts the full f x f Gram matrix, as the reference computes it. Bytes: dense input,
# indices (8 bytes), the embedding rows actually gathered (batch x tables x dim; tables are far larger
# than what one batch touches), MLP parameters, output.
def _mlp_costs(shape):
    dn, t, d = shape["dense"], shape["tables"], shape["dim"]
    f = t + 1
    layers = [(dn, 4 * d, True), (4 * d, d, True), (d + f * (f - 1) // 2, 4 * d, True), (4 * d, 2 * d, True),
              (2 * d, 1, False)]
    per_row = sum(o * (2 * i + 1 + (1 if relu else 0)) for i, o, relu in layers)
    params = sum(i * o + o for i, o, _ in layers)
    return per_row, params


def flops(shape):
    b, t, d = shape["batch"], shape["tables"], shape["dim"]
    f = t + 1
    return b * _mlp_costs(shape)[0] + 2 * b * f * f * d


def bytes_moved(shape, itemsize):
    b, dn, t, d = shape["batch"], shape["dense"], shape["tables"], shape["dim"]
    return b * t * 8 + (b * dn + b * t * d + _mlp_costs(shape)[1] + b) * itemsize
