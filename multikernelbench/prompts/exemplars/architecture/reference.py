"""A two-layer MLP: Linear -> ReLU -> Linear."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [{"batch": 3, "fin": 13, "hidden": 16, "fout": 5}, {"batch": 32, "fin": 100, "hidden": 64, "fout": 10},
               {"batch": 9, "fin": 130, "hidden": 257, "fout": 33}]
BENCH_SHAPE = {"batch": 8192, "fin": 4096, "hidden": 16384, "fout": 4096}
CPU_BENCH_SHAPE = {"batch": 256, "fin": 512, "hidden": 1024, "fout": 256}
# Two chained dot products of up to ~250 terms each: rounding depends on the accumulation order.
TOLERANCE = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def get_init_inputs(shape):
    return [shape["fin"], shape["hidden"], shape["fout"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], shape["fin"], mean=0.2)]


def flops(shape):
    s = shape
    return 2 * s["batch"] * (s["fin"] * s["hidden"] + s["hidden"] * s["fout"])


def bytes_moved(shape, itemsize):
    s = shape
    return (s["batch"] * (s["fin"] + s["fout"]) + s["fin"] * s["hidden"] + s["hidden"]
            + s["hidden"] * s["fout"] + s["fout"]) * itemsize
