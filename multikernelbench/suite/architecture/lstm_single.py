"""Single-layer LSTM (nn.LSTM) with given (h0, c0); returns the output sequence and the final (h, c)."""

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
# Rounding is carried through the recurrence; in bf16 the cell state itself is re-rounded every step.
TOLERANCE = {"float32": (2e-4, 2e-4), "bfloat16": (5e-2, 5e-2)}


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return out, hn, cn


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b, h = shape["batch"], shape["hidden"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, 1, b, h, std=0.5), randn(gen, 1, b, h)]


# Cost convention: multiply-add = 2 flops; per step and hidden unit: 8 bias adds, 4 input+recurrent adds,
# 3 sigmoids + 2 tanh, c = f*c + i*g (3) and h = o*tanh(c) (1), 1 flop each (= 21).
# Bytes: x, h0, c0, weights/biases, output sequence, final h and c.
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    return b * L * (2 * 4 * h * (i + h) + 21 * h)


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = 4 * h * (i + h) + 8 * h
    return (b * L * i + 4 * b * h + params + b * L * h) * itemsize
