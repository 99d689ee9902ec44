"""Pallas candidate for loss.mse_mean: per-block partial sums of squared differences in a Pallas kernel,
then the (small) vector of partials summed and divided by n.

Each grid step reduces a [BR, 1024] tile to one partial; padding (zeros in both operands) adds nothing."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch

BR, BC = 8, 1024


def _kernel(a_ref, b_ref, o_ref):
    d = a_ref[...] - b_ref[...]
    o_ref[...] = jnp.sum(d * d, axis=1, keepdims=True)


@functools.partial(jax.jit, static_argnames=("n",))
def _mse(a, b, n):
    per = BR * BC
    padded = pl.cdiv(n, per) * per
    if padded != n:
        a = jnp.pad(a, (0, padded - n))
        b = jnp.pad(b, (0, padded - n))
    rows = padded // BC
    partial = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((rows, 1), jnp.float32),
        grid=(rows // BR,),
        in_specs=[pl.BlockSpec((BR, BC), lambda i: (i, 0)), pl.BlockSpec((BR, BC), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((BR, 1), lambda i: (i, 0)),
    )(a.reshape(rows, BC), b.reshape(rows, BC))
    return jnp.sum(partial) / n


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        n = pred.numel()
        y = _mse(to_jax(pred.reshape(-1)), to_jax(target.reshape(-1)), n=n)
        return to_torch(y, pred.device).reshape(())
