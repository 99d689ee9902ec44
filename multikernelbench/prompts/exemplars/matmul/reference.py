"""Matrix product of an (M, K) and a (K, N) matrix."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"m": 7, "k": 13, "n": 5}, {"m": 64, "k": 100, "n": 33}, {"m": 130, "k": 67, "n": 129}]
BENCH_SHAPE = {"m": 8192, "k": 8192, "n": 8192}
CPU_BENCH_SHAPE = {"m": 512, "k": 512, "n": 512}
# Dot products of ~100 terms: fp32 rounding depends on the accumulation order (and TF32 is not allowed).
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["m"], shape["k"]), randn(gen, shape["k"], shape["n"])]


def flops(shape):
    return 2 * shape["m"] * shape["k"] * shape["n"]


def bytes_moved(shape, itemsize):
    return (shape["m"] * shape["k"] + shape["k"] * shape["n"] + shape["m"] * shape["n"]) * itemsize
