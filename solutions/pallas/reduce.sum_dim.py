"""Pallas candidate for reduce.sum_dim: sum over the middle axis of [B, R, I], keepdim.

Grid (batch, inner tiles of 128); each step walks R in chunks of 32 rows with a fori_loop, accumulating a
[32, 128] tile, so every element is read once with contiguous 512-byte rows. R and I are zero-padded to
whole chunks (zeros do not change a sum; no-op at the benchmark shape)."""

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

BR, BI = 32, 128


@jax.jit
def _sum_mid(x):
    b, r, i = x.shape
    rp, ip = pl.cdiv(r, BR) * BR, pl.cdiv(i, BI) * BI
    if (rp, ip) != (r, i):
        x = jnp.pad(x, ((0, 0), (0, rp - r), (0, ip - i)))
    steps = rp // BR

    def kernel(x_ref, o_ref):
        def body(k, acc):
            return acc + x_ref[pl.ds(k * BR, BR), :]

        acc = jax.lax.fori_loop(0, steps, body, jnp.zeros((BR, BI), jnp.float32))
        o_ref[...] = jnp.sum(acc, axis=0, keepdims=True)

    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((b, 1, ip), x.dtype),
        grid=(b, ip // BI),
        in_specs=[pl.BlockSpec((None, rp, BI), lambda bb, j: (bb, 0, j))],
        out_specs=pl.BlockSpec((None, 1, BI), lambda bb, j: (bb, 0, j)),
    )(x)
    return out[:, :, :i]


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return to_torch(_sum_mid(to_jax(x)), x.device)
