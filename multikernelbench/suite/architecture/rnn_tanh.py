"""Two-layer Elman RNN (tanh) over a sequence with given initial hidden state; returns all outputs and the final state."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 31, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 256, "seq": 512, "input": 1024, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 16, "seq": 64, "input": 256, "hidden": 256}
LAYERS = 2
TOLERANCE = {"float32": (2e-4, 2e-4)}  # rounding carried through the recurrence


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden, num_layers=LAYERS, nonlinearity="tanh", batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor):
        out, hn = self.rnn(x, h0)
        return out, hn


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b, h = shape["batch"], shape["hidden"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, LAYERS, b, h, std=0.5)]


# Cost convention: multiply-add = 2 flops; per step and hidden unit: two bias adds, the input+recurrent
# add and tanh, 1 flop each. Bytes: x, h0, weights/biases, output sequence and final state, once each.
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    f = 0
    for layer in range(LAYERS):
        fin = i if layer == 0 else h
        f += b * L * (2 * h * (fin + h) + 4 * h)
    return f


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = (i * h + h * h + 2 * h) + (LAYERS - 1) * (2 * h * h + 2 * h)
    return (b * L * i + 2 * LAYERS * b * h + params + b * L * h) * itemsize
