"""LeNet-5 style CNN: two (conv 5x5, ReLU, 2x2 max-pool) stages and three fully connected layers."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

TEST_SHAPES = [
    {"batch": 2, "size": 17, "classes": 10},
    {"batch": 3, "size": 32, "classes": 7},
    {"batch": 1, "size": 37, "classes": 33},
]
BENCH_SHAPE = {"batch": 4096, "size": 128, "classes": 1000}
CPU_BENCH_SHAPE = {"batch": 64, "size": 32, "classes": 10}


def _dims(size):
    c1 = size - 4
    p1 = c1 // 2
    c2 = p1 - 4
    p2 = c2 // 2
    return c1, p1, c2, p2


class Model(nn.Module):
    def __init__(self, size: int, classes: int):
        super().__init__()
        p2 = _dims(size)[3]
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * p2 * p2, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def get_init_inputs(shape):
    return [shape["size"], shape["classes"]]


def get_inputs(shape, gen):
    return [randn(gen, shape["batch"], 1, shape["size"], shape["size"], mean=0.2)]


# Cost convention: a multiply-add is 2 flops, a bias add / ReLU is 1 flop per element, a max-pool is
# one comparison per window element read. Bytes: input + parameters + output, once each.
def flops(shape):
    b, k = shape["batch"], shape["classes"]
    c1, p1, c2, p2 = _dims(shape["size"])
    f = b * 6 * c1 * c1 * (2 * 25 + 1 + 1)          # conv1 + bias + ReLU
    f += b * 6 * p1 * p1 * 4                          # pool1
    f += b * 16 * c2 * c2 * (2 * 6 * 25 + 1 + 1)     # conv2 + bias + ReLU
    f += b * 16 * p2 * p2 * 4                         # pool2
    n = 16 * p2 * p2
    f += b * 120 * (2 * n + 2) + b * 84 * (2 * 120 + 2) + b * k * (2 * 84 + 1)
    return f


def _params(shape):
    p2 = _dims(shape["size"])[3]
    n = 16 * p2 * p2
    return (6 * 25 + 6) + (16 * 150 + 16) + (n * 120 + 120) + (120 * 84 + 84) + (84 * shape["classes"] + shape["classes"])


def bytes_moved(shape, itemsize):
    b = shape["batch"]
    return (b * shape["size"] ** 2 + _params(shape) + b * shape["classes"]) * itemsize
