"""Bidirectional single-layer LSTM followed by a linear projection of the concatenated directions."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 23, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 64, "seq": 512, "input": 512, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 8, "seq": 64, "input": 128, "hidden": 256}
TOLERANCE = {"float32": (2e-4, 2e-4)}  # rounding carried through the recurrence


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, input_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x, (h0, c0))
        return self.proj(out)


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b, h = shape["batch"], shape["hidden"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, 2, b, h, std=0.5), randn(gen, 2, b, h)]


# Cost convention: per direction as lstm_single (2 flops per multiply-add + 21 elementwise flops per step
# and hidden unit), plus the projection (2 per MAC + bias). Bytes: x, h0, c0, parameters, output.
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    return 2 * b * L * (2 * 4 * h * (i + h) + 21 * h) + b * L * i * (2 * 2 * h + 1)


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = 2 * (4 * h * (i + h) + 8 * h) + 2 * h * i + i
    return (b * L * i + 4 * b * h + params + b * L * i) * itemsize
