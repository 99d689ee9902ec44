"""Gathers rows of a 2-D table by an int64 index vector (index_select along dim 0)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randint, randn

TEST_SHAPES = [{"rows": 10, "dim": 37, "picks": 7}, {"rows": 100, "dim": 130, "picks": 64},
               {"rows": 33, "dim": 1001, "picks": 50}]
BENCH_SHAPE = {"rows": 65536, "dim": 4096, "picks": 65536}
CPU_BENCH_SHAPE = {"rows": 4096, "dim": 1024, "picks": 4096}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.index_select(table, 0, idx)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    return [randn(gen, shape["rows"], shape["dim"]), randint(gen, 0, shape["rows"], shape["picks"])]


def flops(shape):
    return 0


def bytes_moved(shape, itemsize):
    return (shape["rows"] * shape["dim"] + shape["picks"] * shape["dim"]) * itemsize + 8 * shape["picks"]
