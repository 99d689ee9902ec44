"""Pallas candidate for pooling.global_avg_pool: (N*C, H*W) rows, blocks of whole rows, mean in-kernel.

Rows are zero-padded to a power-of-two width (no-op at the benchmark's 64x64 planes); the sum is divided
by the true H*W."""

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch


@jax.jit
def _gap(x):
    rows, hw = x.shape
    hp = 1 << max(0, (hw - 1).bit_length())
    br = max(1, min(16, 16384 // hp))
    pr = pl.cdiv(rows, br) * br
    if (pr, hp) != (rows, hw):
        x = jnp.pad(x, ((0, pr - rows), (0, hp - hw)))

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.sum(x_ref[...], axis=1, keepdims=True) / hw

    out = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((pr, 1), x.dtype), grid=(pr // br,),
                         in_specs=[pl.BlockSpec((br, hp), lambda i: (i, 0))],
                         out_specs=pl.BlockSpec((br, 1), lambda i: (i, 0)))(x)
    return out[:rows]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        y = _gap(to_jax(x.reshape(n * c, h * w)))
        return to_torch(y, x.device).reshape(n, c, 1, 1)
