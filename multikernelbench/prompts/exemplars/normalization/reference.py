"""RMS normalisation over the last dimension with a learnable per-feature scale."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"rows": 3, "dim": 37}, {"rows": 16, "dim": 130}, {"rows": 5, "dim": 1001}]
BENCH_SHAPE = {"rows": 65536, "dim": 8192}
CPU_BENCH_SHAPE = {"rows": 512, "dim": 4096}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_init_inputs(shape):
    return [shape["dim"], 1e-6]


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["dim"], mean=0.3)]


def flops(shape):
    return 4 * shape["rows"] * shape["dim"]


def bytes_moved(shape, itemsize):
    return (2 * shape["rows"] * shape["dim"] + shape["dim"]) * itemsize
