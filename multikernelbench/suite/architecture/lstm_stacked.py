"""Three-layer stacked LSTM (nn.LSTM, num_layers=3) with given initial states; returns outputs and final (h, c)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 23, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 64, "seq": 256, "input": 512, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 8, "seq": 32, "input": 128, "hidden": 256}
LAYERS = 3
TOLERANCE = {"float32": (3e-4, 3e-4)}  # rounding carried through the recurrence and three layers


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, num_layers=LAYERS, batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return out, hn, cn


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b, h = shape["batch"], shape["hidden"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, LAYERS, b, h, std=0.5),
            randn(gen, LAYERS, b, h)]


# Cost convention: as lstm_single per layer: 2 flops per multiply-add plus 21 elementwise flops per step
# and hidden unit. Bytes: x, h0, c0, all layers' weights/biases, output sequence, final h and c.
def _layer_inputs(shape):
    return [shape["input"]] + [shape["hidden"]] * (LAYERS - 1)


def flops(shape):
    b, L, h = shape["batch"], shape["seq"], shape["hidden"]
    return sum(b * L * (2 * 4 * h * (i + h) + 21 * h) for i in _layer_inputs(shape))


def bytes_moved(shape, itemsize):
    b, L, h = shape["batch"], shape["seq"], shape["hidden"]
    params = sum(4 * h * (i + h) + 8 * h for i in _layer_inputs(shape))
    return (b * L * shape["input"] + 4 * LAYERS * b * h + params + b * L * h) * itemsize
