"""Single-layer GRU (nn.GRU) over a sequence with a given initial state; returns the output sequence and final state."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 29, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 128, "seq": 512, "input": 1024, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 16, "seq": 64, "input": 256, "hidden": 256}
# Rounding is carried through the recurrence; in bf16 the hidden state itself is re-rounded every step.
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden, batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor):
        out, hn = self.gru(x, h0)
        return out, hn


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b = shape["batch"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, 1, b, shape["hidden"], std=0.5)]


# Cost convention: multiply-add = 2 flops; per step and hidden unit: 6 bias adds, 3 input+recurrent adds,
# 2 sigmoids, r*(W_hn h), tanh and the 3-op convex update, 1 flop each (= 16).
# Bytes: x, h0, weights/biases, output sequence and final state.
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    return b * L * (2 * 3 * h * (i + h) + 16 * h)


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = 3 * h * (i + h) + 6 * h
    return (b * L * i + 2 * b * h + params + b * L * h) * itemsize
