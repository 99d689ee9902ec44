"""Multi-head graph attention layer (GAT) on a dense adjacency: additive attention scores, LeakyReLU, masked softmax, ELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn, uniform

TEST_SHAPES = [
    {"batch": 2, "nodes": 17, "features": 8, "heads": 4, "head_dim": 8},
    {"batch": 1, "nodes": 37, "features": 33, "heads": 2, "head_dim": 5},
    {"batch": 3, "nodes": 9, "features": 4, "heads": 3, "head_dim": 12},
]
BENCH_SHAPE = {"batch": 4, "nodes": 4096, "features": 256, "heads": 8, "head_dim": 64}
CPU_BENCH_SHAPE = {"batch": 1, "nodes": 384, "features": 128, "heads": 4, "head_dim": 32}
TOLERANCE = {"float32": (2e-4, 2e-4)}  # softmax-weighted sums over up to `nodes` neighbours


class Model(nn.Module):
    def __init__(self, features: int, heads: int, head_dim: int):
        super().__init__()
        self.heads, self.hd = heads, head_dim
        self.W = nn.Linear(features, heads * head_dim, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, head_dim) * 0.3)
        self.a_dst = nn.Parameter(torch.randn(heads, head_dim) * 0.3)

    def forward(self, x: torch.Tensor, edge_score: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        z = self.W(x).view(b, n, self.heads, self.hd)
        es = (z * self.a_src).sum(-1).transpose(1, 2)          # (b, h, n): source term
        ed = (z * self.a_dst).sum(-1).transpose(1, 2)          # (b, h, n): destination term
        e = F.leaky_relu(ed[:, :, :, None] + es[:, :, None, :], 0.2)
        # Edge where score > 0.7 (~30% density), plus self-loops so every row has a neighbour.
        mask = (edge_score > 0.7) | torch.eye(n, dtype=torch.bool, device=x.device)
        att = torch.softmax(e.masked_fill(~mask[:, None], float("-inf")), dim=-1)
        out = att @ z.transpose(1, 2)                          # (b, h, n, hd)
        return F.elu(out.transpose(1, 2).reshape(b, n, self.heads * self.hd))


def get_init_inputs(shape):
    return [shape["features"], shape["heads"], shape["head_dim"]]


def get_inputs(shape, gen):
    b, n = shape["batch"], shape["nodes"]
    return [randn(gen, b, n, shape["features"]), uniform(gen, b, n, n)]


# Cost convention: multiply-add = 2 flops; per (head, i, j): add, LeakyReLU, mask, softmax 4 = 7 flops;
# mask construction 2 flops per (i, j); ELU 1 flop/element. Bytes: x, edge scores, parameters, output.
def flops(shape):
    b, n, f, h, d = (shape[k] for k in ("batch", "nodes", "features", "heads", "head_dim"))
    flo = 2 * b * n * f * h * d               # W
    flo += 2 * 2 * b * n * h * d              # source and destination terms
    flo += 2 * b * n * n + 7 * b * h * n * n  # scores and softmax
    flo += 2 * b * h * n * n * d              # aggregation
    return flo + b * n * h * d                # ELU


def bytes_moved(shape, itemsize):
    b, n, f, h, d = (shape[k] for k in ("batch", "nodes", "features", "heads", "head_dim"))
    return (b * n * f + b * n * n + f * h * d + 2 * h * d + b * n * h * d) * itemsize
