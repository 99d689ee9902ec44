"""First-order linear recurrence scan over time: h_t = a_t * h_{t-1} + x_t, h_{-1} = 0, on [B, T, D]."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn, uniform

TEST_SHAPES = [
    {"batch": 2, "length": 37, "dim": 16},
    {"batch": 3, "length": 100, "dim": 33},
    {"batch": 2, "length": 257, "dim": 5},
]
BENCH_SHAPE = {"batch": 32, "length": 4096, "dim": 4096}
CPU_BENCH_SHAPE = {"batch": 4, "length": 256, "dim": 512}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        h = torch.zeros_like(x[:, 0])
        outs = []
        for t in range(x.shape[1]):
            h = a[:, t] * h + x[:, t]
            outs.append(h)
        return torch.stack(outs, dim=1)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    b, t, d = shape["batch"], shape["length"], shape["dim"]
    # Decays in [0.3, 0.95] keep the state bounded (|h| <~ 20) while remembering tens of steps.
    return [uniform(gen, b, t, d, low=0.3, high=0.95), randn(gen, b, t, d)]


def flops(shape):
    # multiply-add per element
    return 2 * shape["batch"] * shape["length"] * shape["dim"]


def bytes_moved(shape, itemsize):
    # read a and x, write h
    return 3 * shape["batch"] * shape["length"] * shape["dim"] * itemsize
