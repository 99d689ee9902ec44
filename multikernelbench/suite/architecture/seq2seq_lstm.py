"""LSTM encoder-decoder: the encoder's final (h, c) initialises a decoder LSTM run on target embeddings; linear output."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "src": 17, "tgt": 9, "dim": 8},
    {"batch": 3, "src": 7, "tgt": 13, "dim": 33},
    {"batch": 1, "src": 21, "tgt": 19, "dim": 16},
]
BENCH_SHAPE = {"batch": 128, "src": 256, "tgt": 256, "dim": 1024}
CPU_BENCH_SHAPE = {"batch": 16, "src": 32, "tgt": 32, "dim": 256}
TOLERANCE = {"float32": (3e-4, 3e-4)}  # state is carried through both recurrences


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.encoder = nn.LSTM(dim, dim, batch_first=True)
        self.decoder = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, dim)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        _, state = self.encoder(src)
        dec, _ = self.decoder(tgt, state)
        return self.out(dec)


def get_init_inputs(shape):
    return [shape["dim"]]


def get_inputs(shape, gen):
    b, d = shape["batch"], shape["dim"]
    return [randn(gen, b, shape["src"], d), randn(gen, b, shape["tgt"], d)]


# Cost convention: each LSTM 2 flops per multiply-add + 21 elementwise flops per step and unit (see
# lstm_single); output Linear 2 per MAC + bias. Bytes: src, tgt, parameters, output.
def flops(shape):
    b, s, t, d = shape["batch"], shape["src"], shape["tgt"], shape["dim"]
    step = 2 * 4 * d * 2 * d + 21 * d
    return b * (s + t) * step + b * t * d * (2 * d + 1)


def bytes_moved(shape, itemsize):
    b, s, t, d = shape["batch"], shape["src"], shape["tgt"], shape["dim"]
    params = 2 * (8 * d * d + 8 * d) + d * d + d
    return (b * s * d + b * t * d + params + b * t * d) * itemsize
