"""Weight standardisation of a conv weight (O, I, kh, kw): per output channel (w - mean) / (std + eps), unbiased std."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"out_ch": 3, "in_ch": 5, "kernel": 3},
    {"out_ch": 37, "in_ch": 16, "kernel": 1},
    {"out_ch": 64, "in_ch": 33, "kernel": 5},
]
BENCH_SHAPE = {"out_ch": 131072, "in_ch": 512, "kernel": 3}
CPU_BENCH_SHAPE = {"out_ch": 512, "in_ch": 256, "kernel": 3}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-5

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        std = w.std(dim=(1, 2, 3), keepdim=True)  # unbiased (n - 1)
        return (w - mean) / (std + self.eps)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    k = shape["kernel"]
    return [randn(gen, shape["out_ch"], shape["in_ch"], k, k, mean=0.05, std=0.2)]


def flops(shape):
    # Per element: mean-sum 1, subtract 1, square-accumulate 2, divide 1 = 5 (the centred value is
    # counted once).  Per output channel: mean divide, variance divide, sqrt, add eps = 4.
    n = shape["in_ch"] * shape["kernel"] ** 2
    return shape["out_ch"] * (5 * n + 4)


def bytes_moved(shape, itemsize):
    return 2 * shape["out_ch"] * shape["in_ch"] * shape["kernel"] ** 2 * itemsize
