"""GRU written by hand: input and hidden projections per step, reset/update gates and candidate state in a Python loop."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "input": 5, "hidden": 8},
    {"batch": 3, "seq": 9, "input": 33, "hidden": 37},
    {"batch": 1, "seq": 25, "input": 16, "hidden": 12},
]
BENCH_SHAPE = {"batch": 128, "seq": 512, "input": 1024, "hidden": 1024}
CPU_BENCH_SHAPE = {"batch": 16, "seq": 64, "input": 256, "hidden": 256}
TOLERANCE = {"float32": (2e-4, 2e-4)}  # rounding carried through the recurrence


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.x2h = nn.Linear(input_size, 3 * hidden)
        self.h2h = nn.Linear(hidden, 3 * hidden)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        outs = []
        for t in range(x.shape[1]):
            xr, xz, xn = self.x2h(x[:, t]).chunk(3, dim=-1)
            hr, hz, hn = self.h2h(h).chunk(3, dim=-1)
            r = torch.sigmoid(xr + hr)
            z = torch.sigmoid(xz + hz)
            n = torch.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
            outs.append(h)
        return torch.stack(outs, dim=1)


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"]]


def get_inputs(shape, gen):
    b = shape["batch"]
    return [randn(gen, b, shape["seq"], shape["input"]), randn(gen, b, shape["hidden"], std=0.5)]


# Cost convention: multiply-add = 2 flops; per step and hidden unit: 6 bias adds, 3 adds, 2 sigmoids,
# r*hn, tanh, and (1-z)*n + z*h (4 ops) = 17. Bytes: x, h0, weights/biases, output sequence.
def flops(shape):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    return b * L * (2 * 3 * h * (i + h) + 17 * h)


def bytes_moved(shape, itemsize):
    b, L, i, h = shape["batch"], shape["seq"], shape["input"], shape["hidden"]
    params = 3 * h * (i + h) + 6 * h
    return (b * L * i + b * h + params + b * L * h) * itemsize
