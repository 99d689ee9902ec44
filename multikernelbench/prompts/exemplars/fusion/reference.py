"""A linear layer followed by ReLU, which a kernel can fuse into one pass (bias and activation in the epilogue)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 3, "fin": 13, "fout": 7}, {"batch": 32, "fin": 100, "fout": 65},
               {"batch": 17, "fin": 257, "fout": 130}]
BENCH_SHAPE = {"batch": 8192, "fin": 8192, "fout": 8192}
CPU_BENCH_SHAPE = {"batch": 256, "fin": 1024, "fout": 1024}
# Dot products of up to ~250 terms: fp32 rounding depends on the accumulation order.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_init_inputs(shape):
    return [shape["fin"], shape["fout"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["fin"], mean=0.2)]


def flops(shape):
    return 2 * shape["batch"] * shape["fin"] * shape["fout"]


def bytes_moved(shape, itemsize):
    s = shape
    return (s["batch"] * s["fin"] + s["fin"] * s["fout"] + s["fout"] + s["batch"] * s["fout"]) * itemsize
