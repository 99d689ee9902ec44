"""Pallas candidate for normalization.rms_norm: blocks of whole rows, reduction inside the kernel.

Rows are padded with zeros to a power-of-two width (no-op at the benchmark's hidden=4096); zeros add
nothing to the sum of squares, and the mean divides by the true width."""

import functools

import jax
import jax.numpy as jnp
import torch
import torch.nn as nn
from jax.experimental import pallas as pl

from multikernelbench.interop.pallas import to_jax, to_torch


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


@functools.partial(jax.jit, static_argnames=("eps",))
def _rms_norm(x, w, eps):
    rows, h = x.shape
    hp = _next_pow2(h)
    br = max(1, min(8, 8192 // hp))
    pr = pl.cdiv(rows, br) * br
    if (pr, hp) != (rows, h):
        x = jnp.pad(x, ((0, pr - rows), (0, hp - h)))
        w = jnp.pad(w, (0, hp - h))

    def kernel(x_ref, w_ref, o_ref):
        xv = x_ref[...]
        ms = jnp.sum(xv * xv, axis=1, keepdims=True) / h
        o_ref[...] = xv * jax.lax.rsqrt(ms + eps) * w_ref[...]

    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((pr, hp), x.dtype),
        grid=(pr // br,),
        in_specs=[pl.BlockSpec((br, hp), lambda i: (i, 0)), pl.BlockSpec((1, hp), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((br, hp), lambda i: (i, 0)),
    )(x, w.reshape(1, hp))
    return out[:rows, :h]


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden).uniform_(0.5, 1.5))
        self.eps = 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.shape[-1]
        y = _rms_norm(to_jax(x.reshape(-1, h)), to_jax(self.weight), eps=self.eps)
        return to_torch(y, x.device).reshape(x.shape)
