"""nn.Embedding lookup: (batch, seq) int64 token ids into a (vocab, dim) learned table."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"vocab": 37, "dim": 16, "batch": 3, "seq": 5},
    {"vocab": 1000, "dim": 64, "batch": 2, "seq": 33},
    {"vocab": 4099, "dim": 300, "batch": 4, "seq": 17},
]
BENCH_SHAPE = {"vocab": 32000, "dim": 4096, "batch": 64, "seq": 4096}
CPU_BENCH_SHAPE = {"vocab": 8192, "dim": 512, "batch": 8, "seq": 1024}


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)  # N(0, 1) init from the harness's weight seed

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids)


def get_init_inputs(shape):
    return [shape["vocab"], shape["dim"]]


def get_inputs(shape, gen):
    return [randint(gen, 0, shape["vocab"], shape["batch"], shape["seq"])]


def flops(shape):
    return 0  # pure data movement


def bytes_moved(shape, itemsize):
    tokens = shape["batch"] * shape["seq"]
    return (shape["vocab"] + tokens) * shape["dim"] * itemsize + tokens * 8
