"""nn.EmbeddingBag with mode='sum': each row of a (bags, bag_size) id tensor sums bag_size table rows."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint

TEST_SHAPES = [
    {"vocab": 37, "dim": 16, "bags": 5, "bag_size": 3},
    {"vocab": 1000, "dim": 64, "bags": 33, "bag_size": 8},
    {"vocab": 4099, "dim": 129, "bags": 17, "bag_size": 20},
]
BENCH_SHAPE = {"vocab": 1048576, "dim": 256, "bags": 2097152, "bag_size": 8}
CPU_BENCH_SHAPE = {"vocab": 50000, "dim": 128, "bags": 16384, "bag_size": 8}


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="sum")

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.bag(ids)


def get_init_inputs(shape):
    return [shape["vocab"], shape["dim"]]


def get_inputs(shape, gen):
    return [randint(gen, 0, shape["vocab"], shape["bags"], shape["bag_size"])]


def flops(shape):
    return shape["bags"] * shape["dim"] * (shape["bag_size"] - 1)  # adds per output element


def bytes_moved(shape, itemsize):
    # table read once, output written, int64 ids read (row re-reads are not compulsory traffic)
    return (shape["vocab"] + shape["bags"]) * shape["dim"] * itemsize + shape["bags"] * shape["bag_size"] * 8
