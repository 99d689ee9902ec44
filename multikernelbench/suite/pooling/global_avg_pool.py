"""Global average pooling: mean over H and W of an (N, C, H, W) tensor, keeping (N, C, 1, 1)."""

import torch
import torch.nn as nn

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 2, "channels": 3, "height": 17, "width": 33},
    {"batch": 4, "channels": 37, "height": 9, "width": 7},
    {"batch": 3, "channels": 5, "height": 64, "width": 65},
]
BENCH_SHAPE = {"batch": 256, "channels": 1024, "height": 64, "width": 64}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: eager PyTorch already streams the compulsory bytes at the measured "
        "copy bandwidth (eager at 0.94 of the bound); a kernel can match it, not beat it by much. "
        "Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 16, "channels": 128, "height": 56, "width": 56}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3), keepdim=True)


def get_init_inputs(shape):
    return []


def get_inputs(shape, gen):
    # Per-channel offsets are not needed: the means of different (n, c) planes differ through sampling
    # noise only, so a wide std keeps that spread well above rounding.
    return [randn(gen, shape["batch"], shape["channels"], shape["height"], shape["width"], mean=0.5, std=2.0)]


def flops(shape):
    # Per (n, c): H*W - 1 adds + 1 divide = H*W.
    return shape["batch"] * shape["channels"] * shape["height"] * shape["width"]


def bytes_moved(shape, itemsize):
    nc = shape["batch"] * shape["channels"]
    return nc * (shape["height"] * shape["width"] + 1) * itemsize
