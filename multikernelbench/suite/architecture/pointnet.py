"""PointNet classifier: shared per-point MLP (64-128-1024) with BN+ReLU, max-pool over points, MLP head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "points": 37, "width": 8, "classes": 10},
    {"batch": 3, "points": 100, "width": 4, "classes": 7},
    {"batch": 1, "points": 257, "width": 6, "classes": 33},
]
BENCH_SHAPE = {"batch": 64, "points": 4096, "width": 64, "classes": 40}
CPU_BENCH_SHAPE = {"batch": 4, "points": 1024, "width": 16, "classes": 40}


class Model(nn.Module):
    """Layer widths in units of `width` (64 in the paper): w, 2w, 16w per point; head 8w, 4w, classes."""

    def __init__(self, width: int, classes: int):
        super().__init__()
        w = width
        self.c1 = nn.Conv1d(3, w, 1)
        self.b1 = nn.BatchNorm1d(w)
        self.c2 = nn.Conv1d(w, 2 * w, 1)
        self.b2 = nn.BatchNorm1d(2 * w)
        self.c3 = nn.Conv1d(2 * w, 16 * w, 1)
        self.b3 = nn.BatchNorm1d(16 * w)
        self.f1 = nn.Linear(16 * w, 8 * w)
        self.f2 = nn.Linear(8 * w, 4 * w)
        self.f3 = nn.Linear(4 * w, classes)

    def forward(self, pts: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.b1(self.c1(pts)))
        x = F.relu(self.b2(self.c2(x)))
        x = self.b3(self.c3(x))
        g = x.max(dim=2).values
        return self.f3(F.relu(self.f2(F.relu(self.f1(g)))))


def get_init_inputs(shape):
    return [shape["width"], shape["classes"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], 3, shape["points"])]


# Cost convention: multiply-add = 2 flops; bias, inference BatchNorm (2), ReLU, max 1 flop per element
# as noted. Bytes: input points + parameters/BN buffers + logits.
def flops(shape):
    b, n, w, k = shape["batch"], shape["points"], shape["width"], shape["classes"]
    f = b * n * (w * (2 * 3 + 4) + 2 * w * (2 * w + 4) + 16 * w * (2 * 2 * w + 3))
    f += b * n * 16 * w  # max over points
    f += b * (8 * w * (2 * 16 * w + 2) + 4 * w * (2 * 8 * w + 2) + k * (2 * 4 * w + 1))
    return f


def bytes_moved(shape, itemsize):
    b, n, w, k = shape["batch"], shape["points"], shape["width"], shape["classes"]
    params = (3 * w + w + 4 * w) + (2 * w * w + 2 * w + 8 * w) + (32 * w * w + 16 * w + 64 * w)
    params += (128 * w * w + 8 * w) + (32 * w * w + 4 * w) + (4 * w * k + k)
    return (b * 3 * n + params + b * k) * itemsize
