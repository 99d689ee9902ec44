"""MLP variational autoencoder: encoder to (mu, logvar), reparameterised sample with given noise, decoder with sigmoid output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from multikernelbench.tasks.gen import randn

DTYPES = ("float32", "bfloat16")
TEST_SHAPES = [
    {"batch": 3, "input": 37, "hidden": 33, "latent": 5},
    {"batch": 16, "input": 100, "hidden": 64, "latent": 8},
    {"batch": 7, "input": 17, "hidden": 48, "latent": 3},
]
BENCH_SHAPE = {"batch": 32768, "input": 4096, "hidden": 2048, "latent": 256}
# No room to win on the reference GPU, per dtype variant (issue #15 hygiene); not part of the content hash.
NO_HEADROOM = {
    "float32": (
        "H200 baseline 2026-12-01: the time is GEMM work that cuBLAS runs at the measured matmul peak "
        "of the dtype (eager at 0.94 of the bound; the fp32 tolerance rules out TF32, and a bf16 "
        "fraction over 1 means cuBLAS beats the 8192^3 peak measurement on this shape); a kernel can "
        "at best match it. Kept for correctness and SOL parity."
    ),
}
CPU_BENCH_SHAPE = {"batch": 256, "input": 784, "hidden": 512, "latent": 32}


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int, latent: int):
        super().__init__()
        self.enc = nn.Linear(input_size, hidden)
        self.stats = nn.Linear(hidden, 2 * latent)
        self.dec1 = nn.Linear(latent, hidden)
        self.dec2 = nn.Linear(hidden, input_size)

    def forward(self, x: torch.Tensor, eps: torch.Tensor):
        mu, logvar = self.stats(F.relu(self.enc(x))).chunk(2, dim=-1)
        z = mu + torch.exp(0.5 * logvar) * eps
        recon = torch.sigmoid(self.dec2(F.relu(self.dec1(z))))
        return recon, mu, logvar


def get_init_inputs(shape):
    return [shape["input"], shape["hidden"], shape["latent"]]


def get_inputs(shape, gen):
    b = shape["batch"]
    return [randn(gen, b, shape["input"], mean=0.5), randn(gen, b, shape["latent"])]


# Cost convention: multiply-add = 2 flops; bias, ReLU, sigmoid 1 flop per element; reparameterisation
# 4 flops per latent (scale, exp, multiply, add). Bytes: x, eps, parameters, recon, mu, logvar.
def flops(shape):
    b, d, h, z = shape["batch"], shape["input"], shape["hidden"], shape["latent"]
    f = b * h * (2 * d + 2) + b * 2 * z * (2 * h + 1) + b * z * 4
    f += b * h * (2 * z + 2) + b * d * (2 * h + 2)
    return f


def bytes_moved(shape, itemsize):
    b, d, h, z = shape["batch"], shape["input"], shape["hidden"], shape["latent"]
    params = (d * h + h) + (h * 2 * z + 2 * z) + (z * h + h) + (h * d + d)
    return (b * d + b * z + params + b * d + 2 * b * z) * itemsize
