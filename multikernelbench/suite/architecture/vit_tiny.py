"""Tiny ViT: conv patch embedding, class token + learned positions, one pre-norm transformer block, final LayerNorm, linear head on the class token."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "image": 16, "patch": 4, "dim": 32, "heads": 4, "classes": 10},
    {"batch": 1, "image": 35, "patch": 7, "dim": 48, "heads": 3, "classes": 37},
    {"batch": 3, "image": 12, "patch": 3, "dim": 24, "heads": 2, "classes": 5},
]
BENCH_SHAPE = {"batch": 256, "image": 224, "patch": 16, "dim": 768, "heads": 12, "classes": 1000}
CPU_BENCH_SHAPE = {"batch": 4, "image": 64, "patch": 8, "dim": 192, "heads": 3, "classes": 100}
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}  # patch conv + block + head, three LayerNorms


class Model(nn.Module):
    def __init__(self, image: int, patch: int, dim: int, heads: int, classes: int):
        super().__init__()
        n = (image // patch) ** 2
        self.heads = heads
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        x = self.embed(img).flatten(2).transpose(1, 2)
        b, n, d = x.shape
        x = torch.cat([self.cls.expand(b, -1, -1), x], dim=1) + self.pos
        L, h = n + 1, self.heads
        q, k, v = self.qkv(self.norm1(x)).view(b, L, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(d // h), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, L, d))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(self.norm(x[:, 0]))


def get_init_inputs(shape):
    return [shape["image"], shape["patch"], shape["dim"], shape["heads"], shape["classes"]]


def get_inputs(shape, gen):
    s = shape["image"]
    return [randn(gen, shape["batch"], 3, s, s)]


# Cost convention: multiply-add = 2 flops; bias, GELU, residual and position add 1 flop/element;
# LayerNorm 5 flops/element; scale + softmax 5 flops per attention score; the final LayerNorm and head
# run on the class token only. Bytes: image + parameters + logits.
def flops(shape):
    b, s, p, d, h, k = (shape[x] for x in ("batch", "image", "patch", "dim", "heads", "classes"))
    n = (s // p) ** 2
    L = n + 1
    t = b * L
    f = b * n * d * (2 * 3 * p * p + 1) + t * d           # patch conv + bias, position add
    f += 2 * t * d * 5 + t * 3 * d * (2 * d + 1)
    f += 4 * b * L * L * d + 5 * b * h * L * L
    f += t * d * (2 * d + 1) + t * d
    f += t * 4 * d * (2 * d + 2) + t * d * (2 * 4 * d + 1) + t * d
    f += b * d * 5 + b * k * (2 * d + 1)
    return f


def bytes_moved(shape, itemsize):
    b, s, p, d, k = (shape[x] for x in ("batch", "image", "patch", "dim", "classes"))
    n = (s // p) ** 2
    params = (3 * p * p * d + d) + d + (n + 1) * d + 6 * d + (3 * d * d + 3 * d) + (d * d + d)
    params += (4 * d * d + 4 * d) + (4 * d * d + d) + (d * k + k)
    return (b * 3 * s * s + params + b * k) * itemsize
