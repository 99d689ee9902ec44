"""LSTM language model: token embedding, two-layer LSTM (zero initial state), linear projection to vocabulary logits."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint

TEST_SHAPES = [
    {"batch": 2, "seq": 17, "vocab": 37, "dim": 8},
    {"batch": 3, "seq": 9, "vocab": 100, "dim": 33},
    {"batch": 1, "seq": 23, "vocab": 61, "dim": 16},
]
BENCH_SHAPE = {"batch": 32, "seq": 256, "vocab": 32000, "dim": 1024}
CPU_BENCH_SHAPE = {"batch": 8, "seq": 32, "vocab": 4096, "dim": 256}
LAYERS = 2
TOLERANCE = {"float32": (3e-4, 3e-4)}  # two recurrent layers then a long projection


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.emb(tokens))
        return self.head(out)


def get_init_inputs(shape):
    return [shape["vocab"], shape["dim"]]


def get_inputs(shape, gen):
    return [randint(gen, 0, shape["vocab"], shape["batch"], shape["seq"])]


# Cost convention: embedding lookup is data movement (0 flops); each LSTM layer 2 flops per multiply-add
# + 21 elementwise flops per step and unit (see lstm_single); head 2 per MAC + bias.
# Bytes: tokens (8 bytes each) + embedding table + LSTM weights + head + logits, once each.
def flops(shape):
    b, L, v, d = shape["batch"], shape["seq"], shape["vocab"], shape["dim"]
    return LAYERS * b * L * (2 * 4 * d * 2 * d + 21 * d) + b * L * v * (2 * d + 1)


def bytes_moved(shape, itemsize):
    b, L, v, d = shape["batch"], shape["seq"], shape["vocab"], shape["dim"]
    params = v * d + LAYERS * (8 * d * d + 8 * d) + d * v + v
    return b * L * 8 + (params + b * L * v) * itemsize
