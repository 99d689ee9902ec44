"""LSTM written by hand: per time step two Linear layers produce the four gates, unrolled in a Python loop."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 25, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 128, "seq": 512, "input": 1024, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 16, "seq": 64, "input": 256, "hidden": 256}
# Rounding is carried through the recurrence; in bf16 the cell state is re-rounded every step.
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.x2g = nn.Linear(input_size, 4 * hidden)
        self.h2g = nn.Linear(hidden, 4 * hidden)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        outs = []
        for t in range(x.shape[1]):
            i, f, g, o = (self.x2g(x[:, t]) + self.h2g(h)).chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return torch.stack(outs, dim=1), c


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b, h = shape["batch"], shape["hidden"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, b, h, std=0.5), randn(gen, b, h)]


# Cost convention: multiply-add = 2 flops; per step and hidden unit: 8 bias adds, 4 gate adds, 3 sigmoids +
# 2 tanh, cell update 3, output multiply 1 (= 21). Bytes: x, h0, c0, weights/biases, outputs (h seq, c).
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    return b * L * (2 * 4 * h * (i + h) + 21 * h)


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = 4 * h * (i + h) + 8 * h
    return (b * L * i + 2 * b * h + params + b * L * h + b * h) * itemsize
