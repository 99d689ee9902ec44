"""Batched matrix product, then sigmoid -> a sum over the features."""

import math

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "m": 17, "k": 33, "n": 37},
    {"batch": 4, "m": 64, "k": 100, "n": 48},
    {"batch": 3, "m": 33, "k": 257, "n": 129},
]
# k=64 keeps the GEMM short so the eager epilogue dominates: modelled eager fraction 0.44 fp32 / 0.09 bf16 on an H200
BENCH_SHAPE = {"batch": 256, "m": 2048, "k": 64, "n": 4096}
CPU_BENCH_SHAPE = {"batch": 2, "m": 256, "k": 256, "n": 512}
# The GEMM sums hundreds of products before the epilogue; fp32 rounding differs between
# algorithms and accumulation orders, so fp32 is widened to 1e-3.
TOLERANCE = {"float32": (0.001, 0.001)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        x = torch.bmm(a, b)
        x = torch.sigmoid(x)
        x = x.sum(dim=-1, keepdim=True)
        return x


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [
        randn(gen, shape["batch"], shape["m"], shape["k"]),
        randn(gen, shape["batch"], shape["k"], shape["n"], std=1.0 / math.sqrt(shape["k"])),
    ]


# Cost convention: a multiply-add is 2 flops; every elementwise op (bias add, activation, scale, clamp, add)
# is 1 flop per element; per-row / per-channel scalar work (e.g. a sqrt of a variance) is not counted.
def flops(shape):
    bt, m, k, n = shape["batch"], shape["m"], shape["k"], shape["n"]
    y = bt * m * n  # product elements
    return (
          2 * y * k  # batched matrix multiply (multiply-add = 2)
        + y  # sigmoid
        + y  # sum reduction: one op per input element
    )


def bytes_moved(shape, itemsize):
    # Compulsory traffic of a fused kernel: inputs, parameters and the output, each once.
    bt, m, k, n = shape["batch"], shape["m"], shape["k"], shape["n"]
    r = bt * m  # elements after the reduction
    return itemsize * (
          bt * m * k  # a (input)
        + bt * k * n  # b (input)
        + r  # output
    )
